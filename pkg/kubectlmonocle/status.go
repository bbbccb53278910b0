package kubectlmonocle

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// Status prints Monocle name's state on one screen (FormatStatus).
func (p *Plugin) Status(ctx context.Context, name string) error {
	m, err := p.get(ctx, name)
	if err != nil {
		return err
	}
	return FormatStatus(p.Out, m, p.now())
}

// FormatStatus writes what Monocle m's status holds, section by section: the version, URL
// and components; the conditions; the Elasticsearch cluster (kind, URL, the bundled node's
// authentication), its health and disk; each crawler's progress
// and errors; the backups; and, when there is one, the upgrade, the restore, the
// hibernation, maintenance requests and indices of removed workspaces. Times are ages
// relative to now, as kubectl prints them.
func FormatStatus(out io.Writer, m *monoclev1alpha1.Monocle, now time.Time) error {
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	st := m.Status
	age := func(t *metav1.Time) string {
		if t == nil {
			return "-"
		}
		return duration.HumanDuration(now.Sub(t.Time)) + " ago"
	}
	section := func(title string) { fmt.Fprintf(w, "\n%s\n", title) }
	// table starts a section of rows: its header, or the line empty when it has none.
	table := func(title string, rows int, empty, header string) {
		section(title)
		if rows == 0 {
			header = empty
		}
		fmt.Fprintf(w, "  %s\n", header)
	}

	fmt.Fprintf(w, "Monocle %s/%s, version %s, URL %s\n", m.Namespace, m.Name, or(st.Version, "-"), or(st.URL, "-"))
	for _, c := range []struct {
		name string
		s    monoclev1alpha1.ComponentStatus
	}{{"api", st.API}, {"crawler", st.Crawler}, {"elasticsearch", st.Elasticsearch}} {
		fmt.Fprintf(w, "  %s\t%d/%d ready\t%s\n", c.name, c.s.ReadyReplicas, c.s.Replicas, or(c.s.Image, "-"))
	}
	if h := st.Hibernation; h != nil {
		section("HIBERNATION")
		fmt.Fprintf(w, "  %s since %s\tstopped: %s\t%s\n", h.Phase, age(h.Since), or(strings.Join(h.Stopped, ", "), "none"), h.Message)
	} else if m.Spec.Hibernate {
		section("HIBERNATION")
		fmt.Fprintf(w, "  asked (spec.hibernate), not started yet\n")
	}

	table("CONDITIONS", len(st.Conditions), "none yet", "TYPE\tSTATUS\tREASON\tSINCE\tMESSAGE")
	for _, c := range st.Conditions {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, age(&c.LastTransitionTime), oneLine(c.Message))
	}

	section("ELASTICSEARCH")
	if c := st.ElasticsearchCluster; c != nil {
		auth := ""
		if c.Authentication != "" {
			auth = "\tauthentication " + string(c.Authentication)
		}
		fmt.Fprintf(w, "  %s\t%s%s\n", c.Kind, or(c.URL, "-"), auth)
	}
	if h := st.ElasticsearchHealth; h != nil {
		disk := "-"
		if h.DiskUsedPercent != nil {
			disk = fmt.Sprintf("%d%% used", *h.DiskUsedPercent)
		}
		fmt.Fprintf(w, "  health %s\tdisk %s of %s\tindices %s\n", or(h.Status, "-"), disk, quantity(h.DiskSize), quantity(h.IndicesSize))
		if len(h.ReadOnlyIndices) > 0 {
			fmt.Fprintf(w, "  read-only indices: %s\n", strings.Join(h.ReadOnlyIndices, ", "))
		}
	} else {
		fmt.Fprintf(w, "  not read yet\n")
	}

	table("CRAWLERS", len(st.Crawlers), "none", "WORKSPACE\tCRAWLER\tCRAWLED UNTIL\tLAST PROGRESS\tERRORS (DAY/TOTAL)\tLAST ERROR")
	for _, c := range st.Crawlers {
		until := "-"
		if c.CrawledUntil != nil {
			until = c.CrawledUntil.UTC().Format(time.RFC3339)
		}
		errs, last := "0/0", ""
		if e := c.Errors; e != nil {
			errs = fmt.Sprintf("%d/%d", e.LastDay, e.Total)
			if e.LastMessage != "" {
				last = fmt.Sprintf("%s %s: %s", age(e.LastTime), e.LastEntity, oneLine(e.LastMessage))
			}
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\n", c.Workspace, c.Name, until, age(c.LastProgressTime), errs, last)
	}

	section("BACKUP")
	switch b := st.Backup; {
	case m.Spec.Backup == nil:
		fmt.Fprintf(w, "  none (spec.backup is unset)\n")
	case b == nil:
		fmt.Fprintf(w, "  no snapshot yet\n")
	default:
		snap := func(s *monoclev1alpha1.SnapshotStatus) string {
			if s == nil {
				return "none"
			}
			parts := []string{s.Name, age(s.Time)}
			if s.Size != nil {
				parts = append(parts, s.Size.String())
			}
			return strings.Join(append(parts, s.Reason), " ")
		}
		fmt.Fprintf(w, "  repository %s\tsnapshots %d\n", or(b.Repository, "-"), b.Snapshots)
		fmt.Fprintf(w, "  last successful\t%s\n", snap(b.LastSuccessful))
		fmt.Fprintf(w, "  last failure\t%s\n", snap(b.LastFailure))
		if b.Running != "" {
			fmt.Fprintf(w, "  running\t%s\n", b.Running)
		}
		if b.NextScheduled != nil {
			fmt.Fprintf(w, "  next scheduled\t%s\n", b.NextScheduled.UTC().Format(time.RFC3339))
		}
	}

	if u := st.Upgrade; u != nil {
		section("UPGRADE")
		fmt.Fprintf(w, "  %s → %s\t%s\tstarted %s\t%s\n", u.From, u.To, u.Phase, age(u.StartTime), oneLine(u.Message))
	}
	if r := st.Restore; r != nil {
		section("RESTORE")
		fmt.Fprintf(w, "  snapshot %s\t%s\tstarted %s\t%s\n", r.Snapshot, r.Phase, age(r.StartTime), oneLine(r.Message))
	}
	if len(st.Maintenance) > 0 {
		section("MAINTENANCE")
		for _, j := range st.Maintenance {
			fmt.Fprintf(w, "  %s\t%s\tstarted %s\t%s\n", or(j.Request, j.Name), j.Phase, age(j.StartTime), oneLine(j.Message))
		}
	}
	if len(st.UnusedIndices) > 0 {
		section("INDICES OF REMOVED WORKSPACES (kubectl monocle delete-index)")
		for _, u := range st.UnusedIndices {
			fmt.Fprintf(w, "  %s\t%s\t%d docs\t%s\n", u.Workspace, u.Index, u.Docs, quantity(u.Size))
		}
	}
	return flushTrimmed(out, w, &buf)
}

// flushTrimmed flushes w, which writes into buf, and copies buf to out without the spaces
// that end its lines: a row whose last cells are empty ends in the padding of the cells
// before them.
func flushTrimmed(out io.Writer, w *tabwriter.Writer, buf *bytes.Buffer) error {
	if err := w.Flush(); err != nil {
		return err
	}
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(out, strings.Join(lines, "\n"))
	return err
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

func quantity(q *resource.Quantity) string {
	if q == nil {
		return "-"
	}
	return q.String()
}

// oneLine keeps a message on its row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
