package operand

import (
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// The steps of a read, and a view into a Worker's results, for the tests of operand_test.

var (
	ReadHealth     = readHealth
	ReadCrawlers   = readCrawlers
	DeleteThenList = deleteThenList
	RunSnapshots   = runSnapshots
	KeepReplicas   = keepReplicas
)

// SetLast makes r the last result of m in w, as if it were left by an earlier read.
func SetLast(w Worker, m *monoclev1alpha1.Monocle, r Result) {
	x := w.(*worker)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.last[cache.MetaObjectToName(m)] = &state{uid: m.UID, result: r}
}

// Last returns the last result of m in w.
func Last(w Worker, m *monoclev1alpha1.Monocle) Result {
	x := w.(*worker)
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.last[cache.MetaObjectToName(m)].result
}

// ReadNow runs a read of m with in, as Observe starts it, in this goroutine: it takes a slot,
// which the read frees.
func ReadNow(w Worker, m *monoclev1alpha1.Monocle, in Inputs) {
	x := w.(*worker)
	x.slots <- struct{}{}
	apiURL := ""
	if in.APIReady {
		apiURL = apiHealthURL(m)
	}
	key := cache.MetaObjectToName(m)
	x.mu.Lock()
	r := x.last[key]
	if r == nil {
		// A read without a state records nothing, as when m was forgotten meanwhile.
		r = &state{}
	}
	client, err := x.connect(r, in.Target)
	x.mu.Unlock()
	x.read(klog.Background(), key, m.UID, client, err, apiURL, in.Plan, in.Workspaces)
}

// BackUp does the backup and restore work of plan for m with client, as a read does.
func BackUp(w Worker, m *monoclev1alpha1.Monocle, client elastic.Client, plan Plan) *BackupOutcome {
	return w.(*worker).backUp(klog.Background(), cache.MetaObjectToName(m), client, plan)
}
