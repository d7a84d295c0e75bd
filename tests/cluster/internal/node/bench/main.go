// Command bench measures the local node: pod start latency (create → Ready, median of
// sequential pods) and the memory cost of many idle pods.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "admin kubeconfig")
	ns := flag.String("namespace", "bench", "namespace (created, then deleted)")
	latency := flag.Int("latency-pods", 20, "pods created one after another for the latency median")
	idle := flag.Int("idle-pods", 100, "idle pods for the memory measurement")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	check(err)
	cfg.QPS, cfg.Burst = 100, 200
	c := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	_, _ = c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *ns}}, metav1.CreateOptions{})
	defer func() { _ = c.CoreV1().Namespaces().Delete(ctx, *ns, metav1.DeleteOptions{}) }()
	waitSA(ctx, c, *ns)

	var lat []time.Duration
	for i := 0; i < *latency; i++ {
		d := createReady(ctx, c, *ns, fmt.Sprintf("lat-%d", i))
		lat = append(lat, d)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		fmt.Printf("start latency over %d pods: median %v, min %v, max %v\n", len(lat), lat[len(lat)/2].Round(time.Millisecond),
			lat[0].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	}
	deleteAll(ctx, c, *ns)

	if *idle == 0 {
		return
	}
	before, slab := memAvailable(), meminfo("Slab:")
	start := time.Now()
	for i := 0; i < *idle; i++ {
		_, err := c.CoreV1().Pods(*ns).Create(ctx, pod(fmt.Sprintf("idle-%d", i)), metav1.CreateOptions{})
		check(err)
	}
	for ready(ctx, c, *ns) < *idle {
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("%d idle pods Ready in %v\n", *idle, time.Since(start).Round(time.Millisecond))
	time.Sleep(5 * time.Second) // let page cache and slabs settle
	after := memAvailable()
	// Namespaces, veths, mounts and conntrack live in kernel slabs no cgroup is charged for.
	fmt.Printf("kernel slab grew by %d MiB (%.2f MiB/pod)\n", (meminfo("Slab:")-slab)>>20, float64(meminfo("Slab:")-slab)/float64(*idle)/(1<<20))
	if data, err := os.ReadFile("/sys/fs/cgroup/memory/rossoctl/memory.usage_in_bytes"); err == nil {
		// Everything the pods' processes are charged for (RSS, page tables, tmpfs, kernel).
		n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		fmt.Printf("pod cgroups charge %d MiB for %d idle pods (%.2f MiB/pod)\n", n>>20, *idle, float64(n)/float64(*idle)/(1<<20))
	}
	fmt.Printf("MemAvailable dropped by %d MiB for %d idle pods (%.2f MiB/pod)\n", (before-after)>>20, *idle, float64(before-after)/float64(*idle)/(1<<20))
	deleteAll(ctx, c, *ns)
}

func pod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PodSpec{
		Containers: []v1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "infinity"}}},
	}}
}

func createReady(ctx context.Context, c kubernetes.Interface, ns, name string) time.Duration {
	w, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	check(err)
	defer w.Stop()
	start := time.Now()
	_, err = c.CoreV1().Pods(ns).Create(ctx, pod(name), metav1.CreateOptions{})
	check(err)
	for ev := range w.ResultChan() {
		if p, ok := ev.Object.(*v1.Pod); ok {
			for _, cond := range p.Status.Conditions {
				if cond.Type == v1.PodReady && cond.Status == v1.ConditionTrue {
					return time.Since(start)
				}
			}
		}
	}
	panic("watch ended")
}

func ready(ctx context.Context, c kubernetes.Interface, ns string) int {
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	check(err)
	n := 0
	for _, p := range pods.Items {
		for _, cond := range p.Status.Conditions {
			if cond.Type == v1.PodReady && cond.Status == v1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

func deleteAll(ctx context.Context, c kubernetes.Interface, ns string) {
	check(c.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
	for {
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		check(err)
		if len(pods.Items) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitSA(ctx context.Context, c kubernetes.Interface, ns string) {
	for i := 0; i < 100; i++ {
		if _, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func memAvailable() int64 { return meminfo("MemAvailable:") }

func meminfo(key string) int64 {
	data, _ := os.ReadFile("/proc/meminfo")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == key {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
