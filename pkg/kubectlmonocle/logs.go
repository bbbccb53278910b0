package kubectlmonocle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// components maps the names the logs verb takes to the component label and container of
// the operator's pods (pkg/resources: each container is named after its component).
var components = map[string]string{
	"api":           resources.ComponentAPI,
	"crawler":       resources.ComponentCrawler,
	"elasticsearch": resources.ComponentElastic,
}

// Logs prints the logs of the container of component (api, crawler or elasticsearch) of
// each pod of Monocle name, found by the selector labels the operator sets; follow streams
// them until ctx ends. With more than one pod each line starts with "[pod/<name>] ", as
// `kubectl logs --prefix` does.
func (p *Plugin) Logs(ctx context.Context, name, component string, follow bool) error {
	c, ok := components[component]
	if !ok {
		return fmt.Errorf("unknown component %q: one of api, crawler, elasticsearch", component)
	}
	m, err := p.get(ctx, name)
	if err != nil {
		return err
	}
	sel := labels.SelectorFromSet(resources.SelectorLabels(m, c)).String()
	pods, err := p.Kube.CoreV1().Pods(p.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return err
	}
	if len(pods.Items) == 0 {
		return fmt.Errorf("Monocle %s has no %s pod (selector %s): see kubectl monocle status %s", name, component, sel, name)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(pods.Items))
	for i, pod := range pods.Items {
		prefix := ""
		if len(pods.Items) > 1 {
			prefix = "[pod/" + pod.Name + "] "
		}
		stream := func() {
			errs[i] = p.podLogs(ctx, pod.Name, c, follow, prefix, &mu)
		}
		if !follow {
			stream()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); stream() }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// podLogs copies the logs of one container to p.Out line by line, each under mu.
func (p *Plugin) podLogs(ctx context.Context, pod, container string, follow bool, prefix string, mu *sync.Mutex) error {
	rc, err := p.Kube.CoreV1().Pods(p.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: follow}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("pod %s: %w", pod, err)
	}
	defer rc.Close()
	r := bufio.NewReader(rc)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			if line[len(line)-1] != '\n' {
				line += "\n"
			}
			mu.Lock()
			_, werr := io.WriteString(p.Out, prefix+line)
			mu.Unlock()
			if werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("pod %s: %w", pod, err)
		}
	}
}
