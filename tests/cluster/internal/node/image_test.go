package node

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNormalizeRef(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                          "busybox:latest",
		"docker.io/library/busybox:1.36":   "busybox:1.36",
		"docker.io/curlimages/curl:8":      "curlimages/curl:8",
		"gcr.io/distroless/static:nonroot": "gcr.io/distroless/static:nonroot",
		"localhost:5000/app":               "localhost:5000/app:latest",
		"python@sha256:0123":               "python@sha256:0123",
	} {
		if got := normalizeRef(in); got != want {
			t.Errorf("normalizeRef(%q) = %q, want %q", in, got, want)
		}
	}
}

func testStore(t *testing.T) imageStore {
	dir := t.TempDir()
	img := filepath.Join(dir, "busybox-1")
	if err := os.MkdirAll(filepath.Join(img, "rootfs", "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(img, "config.json"), []byte(`{"Cmd":["sleep","infinity"],"User":"65532"}`), 0o644)
	_ = os.WriteFile(filepath.Join(img, "rootfs/etc/passwd"), []byte("nonroot:x:65532:65533::/:/bin/sh\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "images.json"), []byte(`{"busybox:1.36":"`+img+`"}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "images.yaml"), []byte("aliases:\n  busybox: busybox:1.36\n"), 0o644)
	return imageStore{index: filepath.Join(dir, "images.json"), aliases: filepath.Join(dir, "images.yaml")}
}

func TestLookupResolvesAliasesAndPrefixes(t *testing.T) {
	s := testStore(t)
	for _, ref := range []string{"busybox", "busybox:1.36", "docker.io/library/busybox:1.36"} {
		img, err := s.lookup(ref)
		if err != nil || img.config.Cmd[0] != "sleep" {
			t.Errorf("lookup(%q) = %v, %v", ref, img, err)
		}
	}
	_, err := s.lookup("busybox:9.99")
	if err == nil || !strings.Contains(err.Error(), "docker.io/library/busybox:9.99: not found") {
		t.Errorf("unknown tag: %v", err)
	}
	if _, err := s.lookup("bad name"); err == nil || err.(*pullError).reason != "InvalidImageName" {
		t.Errorf("bad name: %v", err)
	}
}

func TestCommandLineAsKubelet(t *testing.T) {
	img := &image{config: imageConfig{Entrypoint: []string{"/entry"}, Cmd: []string{"default"}}}
	for _, tc := range []struct {
		command, args, want []string
	}{
		{nil, nil, []string{"/entry", "default"}},
		{nil, []string{"x"}, []string{"/entry", "x"}},
		{[]string{"sh"}, nil, []string{"sh"}},
		{[]string{"sh"}, []string{"-c", "true"}, []string{"sh", "-c", "true"}},
	} {
		got := commandLine(&v1.Container{Command: tc.command, Args: tc.args}, img)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("command %v args %v: %v, want %v", tc.command, tc.args, got, tc.want)
		}
	}
}

func TestIdentityChecksRunAsNonRootAgainstTheImage(t *testing.T) {
	s := testStore(t)
	nonroot, _ := s.lookup("busybox")
	root := &image{rootfs: t.TempDir()}
	yes := true
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "n"}}
	c := &v1.Container{Name: "c", SecurityContext: &v1.SecurityContext{RunAsNonRoot: &yes}}
	uid, gid, _, err := identity(pod, c, nonroot)
	if err != nil || uid != 65532 || gid != 65533 {
		t.Errorf("nonroot image: %d %d %v", uid, gid, err)
	}
	if _, _, _, err := identity(pod, c, root); err == nil || !strings.Contains(err.Error(), "image will run as root") {
		t.Errorf("root image: %v", err)
	}
}

func TestImageEnvYieldsToTheSpec(t *testing.T) {
	img := &image{config: imageConfig{Env: []string{"PATH=/img", "LANG=C.UTF-8", "A=image"}}}
	got := imageEnv(img, []string{"PATH=/default", "HOME=/root", "A=spec"}, map[string]bool{"A": true})
	want := []string{"PATH=/img", "HOME=/root", "A=spec", "LANG=C.UTF-8"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("env %v, want %v", got, want)
	}
}
