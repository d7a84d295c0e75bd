package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// containerLayer gives a container a fresh writable layer above its image: a restarted
// container starts from the image again, as on a real node. Empty for the host image.
func (w *podWorker) containerLayer(podUID string, c *container, img *image) (string, error) {
	if img.host {
		return "", nil
	}
	dir := w.m.paths.pod(podUID, "layers", c.spec.Name)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("remove the previous writable layer: %w", err)
	}
	for _, sub := range []string{"upper", "work"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func imageRoot(img *image) string {
	if img.host {
		return ""
	}
	return img.rootfs
}

// mountImage puts the container's root on an overlay: the image read-only below, the
// container's own layer above.
func mountImage(cfg *InitConfig) error {
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", cfg.Image,
		filepath.Join(cfg.Layer, "upper"), filepath.Join(cfg.Layer, "work"))
	if err := unix.Mount("overlay", cfg.Rootfs, "overlay", 0, opts); err != nil {
		return fmt.Errorf("rootfs overlay (%s): %w", opts, err)
	}
	return nil
}

// readOnlyRoot makes the container's root read-only once its mount points exist.
func readOnlyRoot(cfg *InitConfig) error {
	flags := uintptr(unix.MS_REMOUNT | unix.MS_RDONLY)
	if cfg.Image != "" {
		flags |= unix.MS_BIND // the overlay itself stays as mounted; this mount of it is read-only
	}
	if err := unix.Mount("", cfg.Rootfs, "", flags, ""); err != nil {
		return fmt.Errorf("read-only rootfs: %w", err)
	}
	return nil
}

// lookPath finds the executable in the container's PATH, as the runtime does after the pivot.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := defaultPath
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(`exec: "` + name + `": executable file not found in $PATH`)
}

// specEnvNames are the variables the container spec sets itself: an image never overrides them.
func specEnvNames(c *v1.Container) map[string]bool {
	out := map[string]bool{}
	for _, e := range c.Env {
		out[e.Name] = true
	}
	return out
}

func podRef(pod *v1.Pod) string { return pod.Name + "_" + pod.Namespace + "(" + string(pod.UID) + ")" }
