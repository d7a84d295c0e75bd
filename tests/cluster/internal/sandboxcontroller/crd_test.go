package sandboxcontroller

import (
	"context"
	"os"
	"reflect"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

const (
	sandboxCRD = "../../manifests/agents.x-k8s.io_sandboxes.yaml"
	runtimeCRD = "../../../../deploy/crds/agent.rossoctl.dev_agentruntimes.yaml"
)

// loadCRD reads a manifest strictly and runs the apiserver's own CRD validation on it.
// It returns the v1 form: the internal one hoists schemas shared by all versions.
func loadCRD(t *testing.T, path string) *apiextv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v1 := &apiextv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, v1); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	apiextv1.SetObjectDefaults_CustomResourceDefinition(v1)
	crd := &apiextensions.CustomResourceDefinition{}
	if err := apiextv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, crd, nil); err != nil {
		t.Fatal(err)
	}
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), crd); len(errs) > 0 {
		t.Fatalf("%s is not a valid CRD: %v", path, errs.ToAggregate())
	}
	return v1
}

func TestSandboxCRD(t *testing.T) {
	crd := loadCRD(t, sandboxCRD)
	if crd.Spec.Group != Group || crd.Spec.Names.Plural != Resource || crd.Spec.Names.Kind != Kind ||
		crd.Spec.Scope != apiextv1.NamespaceScoped {
		t.Fatalf("names %+v", crd.Spec.Names)
	}
	if len(crd.Spec.Versions) != 2 {
		t.Fatalf("versions %d", len(crd.Spec.Versions))
	}
	beta, alpha := crd.Spec.Versions[0], crd.Spec.Versions[1]
	if beta.Name != "v1beta1" || !beta.Storage || !beta.Served || alpha.Name != "v1alpha1" || alpha.Storage || !alpha.Served {
		t.Fatalf("versions %s/%v %s/%v", beta.Name, beta.Storage, alpha.Name, alpha.Storage)
	}
	// With conversion None the same stored object is read at both versions.
	if !reflect.DeepEqual(beta.Schema, alpha.Schema) {
		t.Fatal("v1beta1 and v1alpha1 schemas differ")
	}
	if beta.Subresources == nil || beta.Subresources.Status == nil || len(beta.AdditionalPrinterColumns) == 0 {
		t.Fatal("v1beta1 lacks status subresource or printer columns")
	}
}

func internalSchema(t *testing.T, in *apiextv1.JSONSchemaProps) *apiextensions.JSONSchemaProps {
	t.Helper()
	out := &apiextensions.JSONSchemaProps{}
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(in, out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

func sampleSandbox() map[string]interface{} {
	return map[string]interface{}{
		"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
		"metadata": map[string]interface{}{"name": "orders", "namespace": "team"},
		"spec": map[string]interface{}{
			"operatingMode": "Running", "replicas": int64(1), "shutdownTime": "2026-01-02T03:04:05Z",
			"madeUp": "pruned",
			"podTemplate": map[string]interface{}{
				"metadata": map[string]interface{}{"labels": map[string]interface{}{"app": "orders"}},
				"spec": map[string]interface{}{
					"automountServiceAccountToken": false, "activeDeadlineSeconds": int64(86400),
					"dnsPolicy": "ClusterFirst",
					"containers": []interface{}{map[string]interface{}{
						"name": "agent", "image": "busybox", "stdin": true,
						"env":       []interface{}{map[string]interface{}{"name": "MCP_URL", "value": "http://x"}},
						"resources": map[string]interface{}{"limits": map[string]interface{}{"cpu": "500m", "memory": int64(1 << 29)}},
					}},
				},
			},
		},
	}
}

func TestSandboxSchemaKeepsPodSpec(t *testing.T) {
	crd := loadCRD(t, sandboxCRD)
	props := internalSchema(t, crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	s, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatal(err)
	}
	obj := sampleSandbox()
	pruning.Prune(obj, s, true)
	u := &unstructured.Unstructured{Object: obj}
	if _, found, _ := unstructured.NestedString(obj, "spec", "madeUp"); found {
		t.Error("unknown spec field survived pruning")
	}
	if v, _, _ := unstructured.NestedString(obj, "spec", "podTemplate", "spec", "dnsPolicy"); v != "ClusterFirst" {
		t.Error("pod spec field outside the declared ones was pruned")
	}
	cs, _, _ := unstructured.NestedSlice(obj, "spec", "podTemplate", "spec", "containers")
	if cs[0].(map[string]interface{})["stdin"] != true {
		t.Error("container field outside the declared ones was pruned")
	}
	validator, _, err := validation.NewSchemaValidator(props)
	if err != nil {
		t.Fatal(err)
	}
	if errs := validation.ValidateCustomResource(field.NewPath(""), obj, validator); len(errs) > 0 {
		t.Fatalf("sample rejected: %v", errs.ToAggregate())
	}
	unstructured.SetNestedField(obj, int64(2), "spec", "replicas")
	unstructured.SetNestedField(obj, "Paused", "spec", "operatingMode")
	if errs := validation.ValidateCustomResource(field.NewPath(""), obj, validator); len(errs) != 2 {
		t.Fatalf("want replicas and operatingMode rejected, got %v", errs)
	}
	unstructured.SetNestedField(obj, int64(1), "spec", "replicas")
	unstructured.SetNestedField(obj, "Running", "spec", "operatingMode")
	sb, err := FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	c := sb.Spec.PodTemplate.Spec.Containers[0]
	if c.Env[0].Value != "http://x" || c.Resources.Limits.Memory().Value() != 1<<29 || sb.Spec.ShutdownTime == nil {
		t.Fatalf("decoded %+v", sb.Spec)
	}
}

func TestAgentRuntimeCRD(t *testing.T) {
	crd := loadCRD(t, runtimeCRD)
	if crd.Spec.Group != "agent.rossoctl.dev" || crd.Spec.Names.Plural != "agentruntimes" ||
		crd.Spec.Names.Kind != "AgentRuntime" || crd.Spec.Scope != apiextv1.NamespaceScoped {
		t.Fatalf("names %+v", crd.Spec.Names)
	}
	props := internalSchema(t, crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	validator, _, err := validation.NewSchemaValidator(props)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]interface{}{"apiVersion": "agent.rossoctl.dev/v1alpha1", "kind": "AgentRuntime",
		"metadata": map[string]interface{}{"name": "orders"},
		"spec": map[string]interface{}{"type": "agent", "targetRef": map[string]interface{}{
			"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "name": "orders"}}}
	if errs := validation.ValidateCustomResource(nil, obj, validator); len(errs) > 0 {
		t.Fatalf("valid runtime rejected: %v", errs.ToAggregate())
	}
	unstructured.SetNestedField(obj, "robot", "spec", "type")
	unstructured.RemoveNestedField(obj, "spec", "targetRef", "name")
	if errs := validation.ValidateCustomResource(nil, obj, validator); len(errs) != 2 {
		t.Fatalf("want type and targetRef.name rejected, got %v", errs)
	}
}
