package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	infv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// The schemas come from Go modules in go.mod, read in place from the
// module cache (`go mod download` fills it through the module proxy; no
// other network): nothing is copied or trimmed.
//
//   - Deployment and Service: the Kubernetes OpenAPI v3 documents
//     /openapi/v3/apis/apps/v1 and /openapi/v3/api/v1 as Kubernetes
//     v1.24.0 publishes them (info.version), which k8s.io/kube-openapi
//     carries as pkg/util/proto/testdata/openapi_v3_0_0/{apps/v1,v1}.json
//     (Apache-2.0, the Kubernetes authors).
//   - InferencePool: the v1 openAPIV3Schema of
//     config/crd/bases/inference.networking.k8s.io_inferencepools.yaml in
//     sigs.k8s.io/gateway-api-inference-extension (Apache-2.0).
//   - HTTPRoute: the v1 openAPIV3Schema of
//     config/crd/standard/gateway.networking.k8s.io_httproutes.yaml in
//     sigs.k8s.io/gateway-api (Apache-2.0).
//
// They are made strict as kubeconform's "-strict" schemas are, so that a
// misspelt field is an error rather than silently pruned by the API
// server: every object schema that lists properties (and neither allows
// more nor preserves unknown fields) gets additionalProperties: false;
// int-or-string and quantity strings also accept numbers, as the API
// server does; apiVersion and kind are pinned.

// moduleDir returns the module cache folder of module path (the version
// go.mod requires), downloading it through the module proxy if needed.
func moduleDir(t *testing.T, path string) string {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	for try := 0; try < 2; try++ {
		out, err := exec.Command(gobin, "list", "-m", "-f", "{{.Dir}}", path).Output()
		if err != nil {
			t.Fatalf("go list -m %s: %v", path, err)
		}
		if dir := strings.TrimSpace(string(out)); dir != "" {
			return dir
		}
		if out, err := exec.Command(gobin, "mod", "download", path).CombinedOutput(); err != nil {
			t.Fatalf("go mod download %s: %v\n%s", path, err, out)
		}
	}
	t.Fatalf("module %s is not in the module cache after go mod download", path)
	return ""
}

// strict rewrites an OpenAPI schema (decoded JSON) in place as described
// above.
func strict(v any) {
	switch s := v.(type) {
	case map[string]any:
		if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
			_, extra := s["additionalProperties"]
			if !extra && s["x-kubernetes-preserve-unknown-fields"] != true {
				s["additionalProperties"] = false
			}
		}
		switch s["format"] {
		case "int-or-string":
			delete(s, "type")
			s["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
		case "quantity":
			delete(s, "type")
			s["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}
		}
		for _, c := range s {
			strict(c)
		}
	case []any:
		for _, c := range s {
			strict(c)
		}
	}
}

// pin requires the top-level apiVersion and kind of a resource schema.
func pin(s map[string]any, apiVersion, kind string) {
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props["apiVersion"] = map[string]any{"const": apiVersion}
	props["kind"] = map[string]any{"const": kind}
	req, _ := s["required"].([]any)
	for _, f := range []string{"apiVersion", "kind", "metadata", "spec"} {
		if !slices.Contains(req, any(f)) {
			req = append(req, f)
		}
	}
	s["required"] = req
}

// compile compiles doc (a decoded JSON document, registered as url) at
// pointer ("" for the root).
func compile(t *testing.T, url string, doc any, pointer string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url + "#" + pointer)
	if err != nil {
		t.Fatalf("%s#%s: %v", url, pointer, err)
	}
	return s
}

// readJSON decodes a JSON file as the jsonschema package wants it.
func readJSON(t *testing.T, path string) any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// k8sSchema compiles the named component of a Kubernetes OpenAPI v3
// document of kube-openapi's, strict and pinned.
func k8sSchema(t *testing.T, file, component, apiVersion, kind string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(moduleDir(t, "k8s.io/kube-openapi"), "pkg", "util", "proto", "testdata", "openapi_v3_0_0", file)
	doc, _ := readJSON(t, path).(map[string]any)
	if info, _ := doc["info"].(map[string]any); info == nil || info["title"] != "Kubernetes" {
		t.Fatalf("%s is not a Kubernetes OpenAPI document (info %v)", path, doc["info"])
	}
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	root, ok := schemas[component].(map[string]any)
	if !ok {
		t.Fatalf("%s has no components.schemas.%s", path, component)
	}
	strict(doc)
	pin(root, apiVersion, kind)
	return compile(t, "file://"+filepath.ToSlash(path), doc, "/components/schemas/"+strings.ReplaceAll(component, "/", "~1"))
}

// crdSchema compiles the openAPIV3Schema of version of the CRD in file
// under module, strict and pinned.
func crdSchema(t *testing.T, module, file, version string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(moduleDir(t, module), filepath.FromSlash(file))
	y, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var crd struct {
		Kind string
		Spec struct {
			Group string
			Names struct{ Kind string }
			// The schema is decoded as the jsonschema package decodes
			// JSON (numbers as json.Number).
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := json.Unmarshal(js, &crd); err != nil || crd.Kind != "CustomResourceDefinition" {
		t.Fatalf("%s is not a CRD: %v", path, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != version {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(v.Schema.OpenAPIV3Schema))
		if err != nil {
			t.Fatal(err)
		}
		root, ok := doc.(map[string]any)
		if !ok {
			t.Fatalf("%s %s: openAPIV3Schema is not an object", path, version)
		}
		strict(root)
		pin(root, crd.Spec.Group+"/"+version, crd.Spec.Names.Kind)
		return compile(t, "file://"+filepath.ToSlash(path)+"/"+version, root, "")
	}
	t.Fatalf("%s has no version %s", path, version)
	return nil
}

// validate checks a YAML manifest against s.
func validate(manifest []byte, s *jsonschema.Schema) error {
	js, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// schemas are the four manifests' schemas, by file.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	return map[string]*jsonschema.Schema{
		"deployment.yaml": k8sSchema(t, "apps/v1.json", "io.k8s.api.apps.v1.Deployment", "apps/v1", "Deployment"),
		"service.yaml":    k8sSchema(t, "v1.json", "io.k8s.api.core.v1.Service", "v1", "Service"),
		"inferencepool.yaml": crdSchema(t, "sigs.k8s.io/gateway-api-inference-extension",
			"config/crd/bases/inference.networking.k8s.io_inferencepools.yaml", "v1"),
		"httproute.yaml": crdSchema(t, "sigs.k8s.io/gateway-api",
			"config/crd/standard/gateway.networking.k8s.io_httproutes.yaml", "v1"),
	}
}

// TestManifestSchemas validates each manifest against its published
// schema (strict), and decodes the two CRs strictly into the projects'
// own Go types.
func TestManifestSchemas(t *testing.T) {
	for file, s := range schemas(t) {
		if err := validate(read(t, file), s); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
	var pool infv1.InferencePool
	if err := yaml.UnmarshalStrict(read(t, "inferencepool.yaml"), &pool); err != nil {
		t.Errorf("inferencepool.yaml into %T: %v", pool, err)
	}
	var route gwv1.HTTPRoute
	if err := yaml.UnmarshalStrict(read(t, "httproute.yaml"), &route); err != nil {
		t.Errorf("httproute.yaml into %T: %v", route, err)
	}
}

// TestManifestSchemasReject: each schema rejects a broken copy of its
// manifest: a misspelt field, a value of the wrong type or out of range, a
// missing required field, a wrong apiVersion.
func TestManifestSchemasReject(t *testing.T) {
	s := schemas(t)
	for _, tc := range []struct {
		file, old, new string
	}{
		{"deployment.yaml", "containerPort:", "containerPorts:"},
		{"deployment.yaml", "replicas: 2", "replicas: two"},
		{"deployment.yaml", "      containers:\n        - name: weft\n", "      containers:\n        - nam: weft\n"},
		{"deployment.yaml", "apiVersion: apps/v1", "apiVersion: apps/v1beta1"},
		{"deployment.yaml", "periodSeconds: 5", "periodSeconds: \"5\""},
		{"service.yaml", "targetPort: http", "targetPorts: http"},
		{"service.yaml", "protocol: TCP", "protocol: [TCP]"},
		{"service.yaml", "      port: 8000\n", ""},
		{"inferencepool.yaml", "targetPorts:", "targetPort:"},
		{"inferencepool.yaml", "number: 8000", "number: 80000"},
		{"inferencepool.yaml", "  selector:\n    matchLabels:\n      app: weft\n", ""},
		{"inferencepool.yaml", "inference.networking.k8s.io/v1", "inference.networking.x-k8s.io/v1alpha2"},
		{"httproute.yaml", "PathPrefix", "Prefix"},
		{"httproute.yaml", "backendRefs:", "backendRef:"},
	} {
		orig := string(read(t, tc.file))
		bad := strings.Replace(orig, tc.old, tc.new, 1)
		if bad == orig {
			t.Fatalf("%s: %q is not in the file", tc.file, tc.old)
		}
		if err := validate([]byte(bad), s[tc.file]); err == nil {
			t.Errorf("%s with %q → %q: accepted", tc.file, tc.old, tc.new)
		} else if testing.Verbose() {
			t.Logf("%s %q → %q: %s", tc.file, tc.old, tc.new, cause(err))
		}
	}
}

// cause returns the innermost line of a validation error.
func cause(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
