package node

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// A network plugin's view of one resource type. client-go's informers back off up to 60 s
// after an apiserver outage, during which new policies and namespaces go unenforced; this
// store's reflector retries within a second, as the tests' outages need.
type fastWatch struct {
	indexer   cache.Indexer
	reflector *cache.Reflector
}

// kickingStore tells the net controller about every change the reflector writes.
type kickingStore struct {
	cache.Indexer
	kick func()
}

func (s kickingStore) Add(obj interface{}) error    { return s.then(s.Indexer.Add(obj)) }
func (s kickingStore) Update(obj interface{}) error { return s.then(s.Indexer.Update(obj)) }
func (s kickingStore) Delete(obj interface{}) error { return s.then(s.Indexer.Delete(obj)) }
func (s kickingStore) Replace(list []interface{}, rv string) error {
	return s.then(s.Indexer.Replace(list, rv))
}
func (s kickingStore) then(err error) error {
	s.kick()
	return err
}

func newFastWatch(client rest.Interface, resource string, expected runtime.Object, kick func()) *fastWatch {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	lw := cache.NewListWatchFromClient(client, resource, "", fields.Everything())
	reflector := cache.NewReflectorWithOptions(lw, expected, kickingStore{indexer, kick},
		cache.ReflectorOptions{
			Name:    "node " + resource,
			Backoff: &wait.Backoff{Duration: 100 * time.Millisecond, Cap: time.Second, Steps: 100, Factor: 2},
		})
	return &fastWatch{indexer: indexer, reflector: reflector}
}

// run lists, then watches until ctx ends; synced reports the first complete list.
func (w *fastWatch) run(ctx context.Context) { w.reflector.RunWithContext(ctx) }

func (w *fastWatch) synced() bool { return w.reflector.LastSyncResourceVersion() != "" }

func waitSynced(ctx context.Context, watches ...*fastWatch) error {
	for {
		all := true
		for _, w := range watches {
			all = all && w.synced()
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the network watches did not sync: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
