// Package deploy holds Kubernetes manifests that run weft serve behind the
// Gateway API Inference Extension (Deployment, Service, InferencePool,
// HTTPRoute); its tests validate them against their published schemas
// (the Kubernetes OpenAPI documents in k8s.io/kube-openapi, the CRDs in
// the gateway-api and inference-extension modules) and decode them
// strictly into the projects' Go types.
package deploy
