package controlplane

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// CRDOnlyVersionMain writes a CustomResourceDefinition that serves one version only, with no
// conversion webhook: agent-sandbox 1.0's CRDs (v1alpha1 removed) made from a release that
// still serves both.
//
//	localcluster crd-only-version VERSION IN OUT
func CRDOnlyVersionMain(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: localcluster crd-only-version VERSION IN OUT")
		return 2
	}
	version, in, out := args[0], args[1], args[2]
	text, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crd-only-version:", err)
		return 1
	}
	var crd map[string]any
	if err := yaml.Unmarshal(text, &crd); err != nil {
		fmt.Fprintf(os.Stderr, "crd-only-version: %s: %v\n", in, err)
		return 1
	}
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	var kept []any
	for _, v := range versions {
		entry, _ := v.(map[string]any)
		if entry != nil && entry["name"] == version {
			entry["served"], entry["storage"] = true, true
			kept = append(kept, entry)
		}
	}
	if len(kept) != 1 {
		fmt.Fprintf(os.Stderr, "crd-only-version: %s has no version %s\n", in, version)
		return 1
	}
	spec["versions"] = kept
	spec["conversion"] = map[string]any{"strategy": "None"}
	// The apiserver refuses to drop a version that objects are still stored at: a fresh
	// cluster's status says none was.
	delete(crd, "status")
	written, err := yaml.Marshal(crd)
	if err == nil {
		err = os.WriteFile(out, written, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crd-only-version:", err)
		return 1
	}
	return 0
}
