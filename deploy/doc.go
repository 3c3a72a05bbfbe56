// Package deploy holds Kubernetes manifests that run weft serve behind the
// Gateway API Inference Extension (Deployment, Service, InferencePool,
// HTTPRoute); its test validates them against their schemas.
package deploy
