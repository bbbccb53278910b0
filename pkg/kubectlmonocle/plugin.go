package kubectlmonocle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	"github.com/change-metrics/monocle-operator/pkg/version"
)

// FieldManager is the field manager of the plugin's writes, as kubectl's are
// "kubectl-annotate" or "kubectl-patch": managedFields tell who wrote what.
const FieldManager = "kubectl-monocle"

// Plugin runs the verbs against one namespace of one cluster.
type Plugin struct {
	// Monocles reads and writes Monocles; Kube reads ConfigMaps and pods, and reads and
	// rolls back the workloads (rollout undo).
	Monocles versioned.Interface
	Kube     kubernetes.Interface
	// Namespace is the namespace of the Monocles named.
	Namespace string
	// Out receives what the verbs print.
	Out io.Writer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Connect returns the Plugin for the kubeconfig, context and namespace flags, printing to
// out. NewCommand calls it once the flags are parsed.
type Connect func(flags *genericclioptions.ConfigFlags, out io.Writer) (*Plugin, error)

// KubeconfigConnect is the Connect of the kubectl binary: the kubeconfig (--kubeconfig,
// $KUBECONFIG, ~/.kube/config), its --context and the namespace of -n or of the context.
func KubeconfigConnect(flags *genericclioptions.ConfigFlags, out io.Writer) (*Plugin, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "kubectl-monocle"
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	mc, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Plugin{Monocles: mc, Kube: kc, Namespace: ns, Out: out}, nil
}

// NewCommand is the "kubectl monocle" command with its verbs and kubectl's connection flags
// (--kubeconfig, --context, -n/--namespace and the others of genericclioptions).
func NewCommand(streams genericiooptions.IOStreams, connect Connect) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:   "kubectl-monocle",
		Short: "Day-2 operations on Monocles, through the annotations and fields the operator reads",
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl monocle",
		},
		// --version prints the release and commit stamped at build (make build, make
		// release-plugin).
		Version:       strings.Replace(version.String(), "monocle-operator", "kubectl-monocle", 1),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	flags.AddFlags(root.PersistentFlags())
	run := func(verb func(ctx context.Context, p *Plugin, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			p, err := connect(flags, streams.Out)
			if err != nil {
				return err
			}
			return verb(cmd.Context(), p, args)
		}
	}
	for _, c := range verbs(run) {
		root.AddCommand(c)
	}
	return root
}

// runner wraps a verb into a cobra RunE that connects to the cluster first.
type runner = func(verb func(ctx context.Context, p *Plugin, args []string) error) func(*cobra.Command, []string) error

// verbs are the subcommands, each wrapped by run.
func verbs(run runner) []*cobra.Command {
	var crawler, since, from, into string
	var follow bool
	recrawl := &cobra.Command{
		Use:   "recrawl <name> <workspace> [--crawler <crawler>] [--since <date>]",
		Short: "Wipe what the workspace's crawlers indexed so they crawl it again, or move them back to --since (spec.maintenance)",
		Args:  cobra.ExactArgs(2),
		RunE: run(func(ctx context.Context, p *Plugin, a []string) error {
			return p.Recrawl(ctx, a[0], a[1], crawler, since)
		}),
	}
	recrawl.Flags().StringVar(&crawler, "crawler", "", "only this crawler of the workspace (default: each of them)")
	recrawl.Flags().StringVar(&since, "since", "", "set the crawlers' commit date to this update_since date instead of wiping their data")
	restore := &cobra.Command{
		Use:   "restore <snapshot> --from <name> --into <new-name>",
		Short: "Create a Monocle <new-name> with the spec of <name> that restores <snapshot> of its backup repository (spec.restore) and backs up into one of its own",
		Args:  cobra.ExactArgs(1),
		RunE: run(func(ctx context.Context, p *Plugin, a []string) error {
			return p.Restore(ctx, a[0], from, into)
		}),
	}
	restore.Flags().StringVar(&from, "from", "", "the Monocle whose backup repository holds the snapshot, and whose spec the new one copies")
	restore.Flags().StringVar(&into, "into", "", "the name of the new Monocle")
	_ = restore.MarkFlagRequired("from")
	_ = restore.MarkFlagRequired("into")
	logs := &cobra.Command{
		Use:       "logs <name> api|crawler|elasticsearch [-f]",
		Short:     "Print the logs of a component's pods",
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"api", "crawler", "elasticsearch"},
		RunE: run(func(ctx context.Context, p *Plugin, a []string) error {
			return p.Logs(ctx, a[0], a[1], follow)
		}),
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "stream the logs")
	return []*cobra.Command{
		{
			Use: "status <name>", Short: "Print a Monocle's state on one screen", Args: cobra.ExactArgs(1),
			RunE: run(func(ctx context.Context, p *Plugin, a []string) error { return p.Status(ctx, a[0]) }),
		},
		{
			Use: "backup <name>", Short: "Take a snapshot now (annotation " + monoclev1alpha1.BackupAnnotation + ")", Args: cobra.ExactArgs(1),
			RunE: run(func(ctx context.Context, p *Plugin, a []string) error { return p.Backup(ctx, a[0]) }),
		},
		restore,
		recrawl,
		{
			Use: "hibernate <name>", Short: "Stop the crawler, the API and Elasticsearch, keeping their data (spec.hibernate=true)", Args: cobra.ExactArgs(1),
			RunE: run(func(ctx context.Context, p *Plugin, a []string) error { return p.Hibernate(ctx, a[0], true) }),
		},
		{
			Use: "wake <name>", Short: "Start a hibernated Monocle again (spec.hibernate=false)", Args: cobra.ExactArgs(1),
			RunE: run(func(ctx context.Context, p *Plugin, a []string) error { return p.Hibernate(ctx, a[0], false) }),
		},
		{
			Use: "delete-index <name> <workspace|index>", Short: "Delete the index of a removed workspace (annotation " + monoclev1alpha1.DeleteIndexAnnotation + ")", Args: cobra.ExactArgs(2),
			RunE: run(func(ctx context.Context, p *Plugin, a []string) error { return p.DeleteIndex(ctx, a[0], a[1]) }),
		},
		logs,
		rolloutCommand(run),
	}
}

// Refusal is a verb's refusal to write, with the operator's reason.
type Refusal struct {
	// Monocle names the Monocle; Reason is why nothing was written.
	Monocle, Reason string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("refused for Monocle %s: %s", r.Monocle, r.Reason)
}

// kubectlName is how kubectl names a Monocle in what it prints: "monocle.<group>/<name>".
func kubectlName(name string) string {
	return "monocle." + monoclev1alpha1.GroupName + "/" + name
}

func (p *Plugin) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Plugin) get(ctx context.Context, name string) (*monoclev1alpha1.Monocle, error) {
	return p.Monocles.MonocleV1alpha1().Monocles(p.Namespace).Get(ctx, name, metav1.GetOptions{})
}

// patch sends patch, a JSON merge patch (RFC 7386), to Monocle name, as `kubectl patch
// --type=merge` and `kubectl annotate` do.
func (p *Plugin) patch(ctx context.Context, name string, patch any) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = p.Monocles.MonocleV1alpha1().Monocles(p.Namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: FieldManager})
	return err
}

// mergePatch sends patch, then prints "<resource> <verb> <what>" as kubectl does.
func (p *Plugin) mergePatch(ctx context.Context, name string, patch any, verb string, what ...string) error {
	if err := p.patch(ctx, name, patch); err != nil {
		return err
	}
	return p.printf("%s %s %s\n", kubectlName(name), verb, strings.Join(what, " "))
}

// requestTime is the layout of the times the verbs put in requests: UTC, to the millisecond.
const requestTime = "20060102T150405.000Z"

func (p *Plugin) printf(format string, args ...any) error {
	_, err := fmt.Fprintf(p.Out, format, args...)
	return err
}
