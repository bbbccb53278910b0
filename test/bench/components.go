package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// usage is what the processes of a run consumed between two snapshots: CPU seconds by process,
// and seconds that kube-controller-manager's and kube-scheduler's requests waited in their
// client-side rate limiters (rest_client_rate_limiter_duration_seconds_sum), which tells
// whether their --kube-api-qps shaped an end-to-end figure.
type usage struct {
	cpu          map[string]float64
	throttleWait map[string]float64
}

// snapshot reads the CPU time of every control-plane process and of op, and the throttling
// of the components that have a client-side limiter.
func (e *env) snapshot(ctx context.Context, op *testkit.Process) usage {
	u := usage{cpu: map[string]float64{}, throttleWait: map[string]float64{}}
	pids := e.Cluster.PIDs()
	pids["monocle-operator"] = op.PID()
	for name, pid := range pids {
		if s, err := testkit.ProcCPUSeconds(pid); err == nil {
			u.cpu[name] = s
		}
	}
	for _, comp := range []string{localcluster.ComponentControllerManager, localcluster.ComponentScheduler} {
		m, err := e.componentMetrics(ctx, comp)
		if err == nil {
			u.throttleWait[comp] = m.Sum("rest_client_rate_limiter_duration_seconds_sum")
		}
	}
	return u
}

// since returns u minus an earlier snapshot.
func (u usage) since(before usage) usage {
	d := usage{cpu: map[string]float64{}, throttleWait: map[string]float64{}}
	for k, v := range u.cpu {
		d.cpu[k] = v - before.cpu[k]
	}
	for k, v := range u.throttleWait {
		d.throttleWait[k] = v - before.throttleWait[k]
	}
	return d
}

// String lists CPU seconds by process, largest first, then the throttling waits.
func (u usage) String() string {
	type kv struct {
		k string
		v float64
	}
	var cpu []kv
	var total float64
	for k, v := range u.cpu {
		cpu = append(cpu, kv{k, v})
		total += v
	}
	sort.Slice(cpu, func(i, j int) bool { return cpu[i].v > cpu[j].v })
	parts := make([]string, 0, len(cpu))
	for _, x := range cpu {
		parts = append(parts, fmt.Sprintf("%s %.1f", x.k, x.v))
	}
	s := fmt.Sprintf("CPU seconds %.1f (%s)", total, strings.Join(parts, ", "))
	var waits []string
	for _, comp := range []string{localcluster.ComponentControllerManager, localcluster.ComponentScheduler} {
		if v, ok := u.throttleWait[comp]; ok {
			waits = append(waits, fmt.Sprintf("%s %.1f s", comp, v))
		}
	}
	if len(waits) > 0 {
		s += "; client-side throttling summed over requests: " + strings.Join(waits, ", ")
	}
	return s
}

var securePort = regexp.MustCompile(`--secure-port=(\d+)`)

// componentMetrics scrapes the /metrics of kube-controller-manager or kube-scheduler on
// loopback with the admin token; the port is read from the command line localcluster writes
// at the top of the component's log.
func (e *env) componentMetrics(ctx context.Context, component string) (testkit.Metrics, error) {
	f, err := os.Open(e.Cluster.LogPath(component))
	if err != nil {
		return nil, err
	}
	first, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if err != nil {
		return nil, err
	}
	m := securePort.FindStringSubmatch(first)
	if m == nil {
		return nil, fmt.Errorf("no --secure-port in %s", e.Cluster.LogPath(component))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:"+m[1]+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+localcluster.AdminToken)
	resp, err := componentClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s /metrics: %d", component, resp.StatusCode)
	}
	return testkit.ParseMetrics(string(body)), nil
}

// componentClient talks to the components' self-signed loopback endpoints.
var componentClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}
