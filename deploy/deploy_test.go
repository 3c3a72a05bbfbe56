package deploy

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// schema compiles testdata/NAME (see testdata/README.md).
func schema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// validateCRD checks a manifest against a CRD's schema.
func validateCRD(t *testing.T, manifest []byte, s *jsonschema.Schema) error {
	t.Helper()
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

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestManifests validates each manifest against its schema (strictly:
// an unknown field is an error) and checks that they fit together.
func TestManifests(t *testing.T) {
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict(read(t, "deployment.yaml"), &dep); err != nil {
		t.Fatalf("deployment.yaml: %v", err)
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict(read(t, "service.yaml"), &svc); err != nil {
		t.Fatalf("service.yaml: %v", err)
	}
	if dep.APIVersion != "apps/v1" || dep.Kind != "Deployment" || svc.APIVersion != "v1" || svc.Kind != "Service" {
		t.Errorf("kinds: %s %s, %s %s", dep.APIVersion, dep.Kind, svc.APIVersion, svc.Kind)
	}
	pool, route := read(t, "inferencepool.yaml"), read(t, "httproute.yaml")
	if err := validateCRD(t, pool, schema(t, "inferencepool-v1.json")); err != nil {
		t.Errorf("inferencepool.yaml: %v", err)
	}
	if err := validateCRD(t, route, schema(t, "httproute-v1.json")); err != nil {
		t.Errorf("httproute.yaml: %v", err)
	}

	// They refer to each other consistently.
	var p struct {
		Metadata struct{ Name string }
		Spec     struct {
			Selector    struct{ MatchLabels map[string]string } `json:"selector"`
			TargetPorts []struct{ Number int32 }                `json:"targetPorts"`
		}
	}
	var r struct {
		Spec struct {
			Rules []struct {
				BackendRefs []struct{ Group, Kind, Name string } `json:"backendRefs"`
			}
		}
	}
	if err := yaml.Unmarshal(pool, &p); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(route, &r); err != nil {
		t.Fatal(err)
	}
	labels := dep.Spec.Template.Labels
	for k, v := range p.Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("the pool selects %s=%s; the pods are labelled %v", k, v, labels)
		}
	}
	for k, v := range svc.Spec.Selector {
		if labels[k] != v {
			t.Errorf("the service selects %s=%s; the pods are labelled %v", k, v, labels)
		}
	}
	c := dep.Spec.Template.Spec.Containers[0]
	port := c.Ports[0].ContainerPort
	if len(p.Spec.TargetPorts) != 1 || p.Spec.TargetPorts[0].Number != port {
		t.Errorf("the pool targets %v; the container listens on %d", p.Spec.TargetPorts, port)
	}
	if i := slices.Index(c.Args, "--port"); i < 0 || c.Args[i+1] != "8000" || port != 8000 || c.Args[0] != "serve" {
		t.Errorf("container args %v, port %d", c.Args, port)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/health" {
		t.Errorf("readiness probe %+v: want GET /health", c.ReadinessProbe)
	}
	if g := dep.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g <= 30 {
		t.Errorf("terminationGracePeriodSeconds %v: must exceed --drain-timeout 30s", g)
	}
	ref := r.Spec.Rules[0].BackendRefs[0]
	if ref.Kind != "InferencePool" || ref.Group != "inference.networking.k8s.io" || ref.Name != p.Metadata.Name {
		t.Errorf("the route's backend %+v is not the pool %q", ref, p.Metadata.Name)
	}
}

// TestValidationRejects checks that the validators can fail: a misspelt
// field, a wrong type, a missing required field.
func TestValidationRejects(t *testing.T) {
	pool := string(read(t, "inferencepool.yaml"))
	route := string(read(t, "httproute.yaml"))
	ps, rs := schema(t, "inferencepool-v1.json"), schema(t, "httproute-v1.json")
	crds := []struct {
		name     string
		manifest string
		s        *jsonschema.Schema
	}{
		{"pool: misspelt field", strings.Replace(pool, "targetPorts:", "targetPort:", 1), ps},
		{"pool: port out of range", strings.Replace(pool, "number: 8000", "number: 80000", 1), ps},
		{"pool: no selector", strings.Replace(pool, "  selector:\n    matchLabels:\n      app: weft\n", "", 1), ps},
		{"pool: wrong version", strings.Replace(pool, "inference.networking.k8s.io/v1", "inference.networking.x-k8s.io/v1alpha2", 1), ps},
		{"route: bad path type", strings.Replace(route, "PathPrefix", "Prefix", 1), rs},
		{"route: misspelt field", strings.Replace(route, "backendRefs:", "backendRef:", 1), rs},
	}
	for _, tc := range crds {
		if tc.manifest == pool || tc.manifest == route {
			t.Fatalf("%s: the edit did not apply", tc.name)
		}
		if err := validateCRD(t, []byte(tc.manifest), tc.s); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	dep := string(read(t, "deployment.yaml"))
	for _, bad := range []string{
		strings.Replace(dep, "containerPort:", "containerPorts:", 1),
		strings.Replace(dep, "replicas: 2", "replicas: two", 1),
	} {
		var d appsv1.Deployment
		if err := yaml.UnmarshalStrict([]byte(bad), &d); err == nil {
			t.Errorf("a broken deployment was accepted")
		}
	}
}
