package deploy

import (
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestManifests decodes the Deployment and Service strictly into the
// Kubernetes API's Go types (k8s.io/api; an unknown field is an error)
// and checks that the four manifests fit together. TestManifestSchemas
// (schema_test.go) validates each against its published schema.
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

// TestStrictDecodeRejects checks that strict decoding into k8s.io/api's
// types can fail: a misspelt field, a wrong type.
func TestStrictDecodeRejects(t *testing.T) {
	dep := string(read(t, "deployment.yaml"))
	for _, bad := range []string{
		strings.Replace(dep, "containerPort:", "containerPorts:", 1),
		strings.Replace(dep, "replicas: 2", "replicas: two", 1),
	} {
		if bad == dep {
			t.Fatal("the edit did not apply")
		}
		var d appsv1.Deployment
		if err := yaml.UnmarshalStrict([]byte(bad), &d); err == nil {
			t.Errorf("a broken deployment was accepted")
		}
	}
}
