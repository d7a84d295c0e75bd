package node

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// imageConfig is the part of an image's config a kubelet applies to a container.
type imageConfig struct {
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	Env        []string `json:"Env,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
	User       string   `json:"User,omitempty"`
}

// image is one image of the store (tests/cluster/images/build): a root filesystem and its
// config. host is the node's own root, for the node's add-ons that run its binary.
type image struct {
	ref    string
	rootfs string
	config imageConfig
	host   bool
}

// hostImageRegistry names the node's add-ons' images: they see the host's /usr, /bin, /lib, /etc.
const hostImageRegistry = "rossoctl.dev/"

// normalizeRef spells a reference as the store does: no docker.io/library/ prefix, a tag.
func normalizeRef(ref string) string {
	for _, prefix := range []string{"docker.io/library/", "index.docker.io/library/", "docker.io/", "index.docker.io/"} {
		if rest, ok := strings.CutPrefix(ref, prefix); ok {
			ref = rest
			break
		}
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if !strings.Contains(last, ":") && !strings.Contains(last, "@") {
		ref += ":latest"
	}
	return ref
}

// imageStore finds images: the index `up` writes (reference -> directory) and the aliases of
// tests/cluster/images.yaml. Both are read at each pull, so a rebuilt store needs no restart.
type imageStore struct {
	index   string
	aliases string
}

func newImageStore(p paths, self string) imageStore {
	// self is tests/cluster/bin/localcluster; images.yaml sits in tests/cluster.
	return imageStore{index: filepath.Join(p.dir, "images.json"),
		aliases: filepath.Join(filepath.Dir(filepath.Dir(self)), "images.yaml")}
}

type aliasFile struct {
	Aliases map[string]string `json:"aliases"`
}

// lookup resolves a reference as a registry would; an error reads like a registry's "not found".
func (s imageStore) lookup(ref string) (*image, error) {
	if strings.HasPrefix(ref, hostImageRegistry) && strings.HasSuffix(ref, ":host") {
		return &image{ref: ref, rootfs: "/", host: true}, nil
	}
	if ref == "" || strings.ContainsAny(ref, " \t\n") {
		return nil, &pullError{reason: "InvalidImageName", msg: fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: invalid reference format", ref, ref)}
	}
	name := normalizeRef(ref)
	if data, err := os.ReadFile(s.aliases); err == nil {
		var af aliasFile
		if err := yaml.Unmarshal(data, &af); err != nil {
			return nil, fmt.Errorf("%s: %w", s.aliases, err)
		}
		for alias, target := range af.Aliases {
			if normalizeRef(alias) == name {
				name = normalizeRef(target)
				break
			}
		}
	}
	index := map[string]string{}
	data, err := os.ReadFile(s.index)
	if os.IsNotExist(err) {
		// A cluster started before the store existed keeps running pods on the host's dirs.
		return &image{ref: ref, rootfs: "/", host: true}, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &index)
	}
	if err != nil {
		return nil, fmt.Errorf("image store index: %w", err)
	}
	for known, dir := range index {
		if normalizeRef(known) != name {
			continue
		}
		img := &image{ref: ref, rootfs: filepath.Join(dir, "rootfs")}
		data, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err == nil {
			err = json.Unmarshal(data, &img.config)
		}
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", known, err)
		}
		return img, nil
	}
	full, first := name, strings.Split(name, "/")[0]
	switch {
	case !strings.Contains(name, "/"):
		full = "docker.io/library/" + name // a dot in the tag (busybox:9.99) names no registry
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		full = "docker.io/" + name
	}
	return nil, fmt.Errorf("rpc error: code = NotFound desc = failed to pull and unpack image %q: "+
		"failed to resolve reference %q: %s: not found (the local node's image store has %s)",
		full, full, full, strings.Join(knownRefs(index), ", "))
}

func knownRefs(index map[string]string) []string {
	out := make([]string, 0, len(index))
	for ref := range index {
		out = append(out, ref)
	}
	sort.Strings(out)
	return out
}

// pullError is why a container has no image; reason is the kubelet's waiting reason.
type pullError struct{ reason, msg string }

func (e *pullError) Error() string { return e.msg }

// pullState is a container's image back-off, as the kubelet's: 10 s doubling to 5 min.
type pullState struct {
	failedAt  time.Time
	backoff   time.Duration
	inBackoff bool
	final     *pullError // ErrImageNeverPull, InvalidImageName: reported again without new events
}

// pullImage resolves the container's image, honouring imagePullPolicy and the back-off after
// a failed pull, and records the kubelet's events.
func (w *podWorker) pullImage(pod *v1.Pod, c *container) (*image, error) {
	ref := c.spec.Image
	w.mu.Lock()
	st := c.pull
	w.mu.Unlock()
	if st.final != nil && time.Since(st.failedAt) < st.backoff {
		return nil, st.final
	}
	if !st.failedAt.IsZero() && time.Since(st.failedAt) < st.backoff {
		msg := fmt.Sprintf("Back-off pulling image %q", ref)
		if !st.inBackoff {
			w.m.event(pod, c, v1.EventTypeNormal, "BackOff", msg)
			w.m.event(pod, c, v1.EventTypeWarning, "Failed", "Error: ImagePullBackOff")
			w.mu.Lock()
			c.pull.inBackoff = true
			w.mu.Unlock()
		}
		return nil, &pullError{reason: "ImagePullBackOff", msg: msg}
	}
	img, err := w.m.images.lookup(ref)
	if err == nil {
		w.mu.Lock()
		c.pull = pullState{}
		w.mu.Unlock()
		switch {
		case img.host:
		case c.spec.ImagePullPolicy == v1.PullAlways:
			w.m.event(pod, c, v1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", ref))
			w.m.event(pod, c, v1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q from the local image store", ref))
		default:
			w.m.event(pod, c, v1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", ref))
		}
		return img, nil
	}
	final, ok := err.(*pullError)
	if !ok && c.spec.ImagePullPolicy == v1.PullNever {
		final = &pullError{reason: "ErrImageNeverPull", msg: fmt.Sprintf("Container image %q is not present with pull policy of Never", ref)}
	}
	if final != nil {
		// Retrying cannot help: the events are recorded once a minute, not at every sync.
		kind := "InspectFailed"
		if final.reason == "ErrImageNeverPull" {
			kind = "ErrImageNeverPull"
		}
		w.m.event(pod, c, v1.EventTypeWarning, kind, final.msg)
		w.m.event(pod, c, v1.EventTypeWarning, "Failed", "Error: "+final.reason)
		w.mu.Lock()
		c.pull = pullState{failedAt: time.Now(), backoff: time.Minute, final: final}
		w.mu.Unlock()
		return nil, final
	}
	w.m.event(pod, c, v1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", ref))
	w.m.event(pod, c, v1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", ref, err))
	w.m.event(pod, c, v1.EventTypeWarning, "Failed", "Error: ErrImagePull")
	w.mu.Lock()
	c.pull = pullState{failedAt: time.Now(), backoff: min(max(st.backoff*2, 10*time.Second), 5*time.Minute)}
	w.mu.Unlock()
	return nil, &pullError{reason: "ErrImagePull", msg: err.Error()}
}

// commandLine merges the container's command and args with the image's Entrypoint and Cmd
// as the kubelet does: command replaces Entrypoint and drops Cmd; args replace Cmd.
func commandLine(c *v1.Container, img *image) []string {
	if len(c.Command) > 0 {
		return append(append([]string{}, c.Command...), c.Args...)
	}
	args := c.Args
	if len(args) == 0 {
		args = img.config.Cmd
	}
	return append(append([]string{}, img.config.Entrypoint...), args...)
}

// imageEnv puts the image's variables under the container's: the container's win.
func imageEnv(img *image, env []string, specEnvNames map[string]bool) []string {
	if img.host {
		return env
	}
	out := []string{}
	have := map[string]int{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		have[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range img.config.Env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := have[k]; ok {
			if !specEnvNames[k] {
				out[i] = kv // the node's default (PATH, HOME) yields to the image's
			}
			continue
		}
		out = append(out, kv)
	}
	return out
}

// imageUser is the uid and gid the image's User names: "uid[:gid]" or a name in its passwd.
func imageUser(img *image) (uid, gid uint32, named bool, err error) {
	user := img.config.User
	if img.host || user == "" {
		return 0, 0, false, nil
	}
	u, g, hasGroup := strings.Cut(user, ":")
	n, err := strconv.ParseUint(u, 10, 32)
	if err != nil {
		return 0, 0, true, nil
	}
	uid, gid = uint32(n), uint32(n)
	if pgid, ok := passwdGID(img.rootfs, uid); ok {
		gid = pgid
	}
	if hasGroup {
		m, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			return 0, 0, false, fmt.Errorf("image user %q: group is not numeric", user)
		}
		gid = uint32(m)
	}
	return uid, gid, false, nil
}

// passwdGID is the primary group of uid in the image's /etc/passwd.
func passwdGID(rootfs string, uid uint32) (uint32, bool) {
	f, err := os.Open(filepath.Join(rootfs, "etc/passwd"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 4 || fields[2] != strconv.FormatUint(uint64(uid), 10) {
			continue
		}
		if g, err := strconv.ParseUint(fields[3], 10, 32); err == nil {
			return uint32(g), true
		}
	}
	return 0, false
}
