package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// hostileCase is one malformed or hostile Monocle, applied with kubectl as a user would.
type hostileCase struct {
	name string
	// namespace, when set, is an existing namespace to run in instead of one of the case's own.
	namespace string
	// objects are applied in the case's namespace first: the user's Secret, foreign objects.
	objects string
	// base, when set, is the spec of a good Monocle "m" that is created and Ready before the
	// hostile step, which is then an update of it.
	base string
	// manifest is the hostile step as a manifest: created with kubectl create, or applied
	// with kubectl apply when base is set.
	manifest string
	// patch is the hostile step as a JSON merge patch of monocle/m (with base).
	patch string
	// rejected are the strings kubectl's error must contain (the field and the problem).
	// Empty means the step must be accepted.
	rejected []string
	// warned are the strings the accepted step's output must contain, as a warning; the
	// Monocle's generation must not change.
	warned []string
	// condition is the condition the accepted Monocle must report.
	condition *hostileCondition
	// check, when set, runs after the condition is reported.
	check func(ns string) error
	// tenant runs the case's objects and hostile step as the namespace's tenant
	// (testkit.Tenant: a user holding only edit there), a Monocle author.
	tenant bool
}

// hostileCondition is a condition of the Monocle "m" (or of monocle) the test waits for.
type hostileCondition struct {
	monocle, typ, status, reason string
	// message holds strings the message must contain; notMessage strings it must not.
	message, notMessage []string
}

// hostileNamespace is where the cases without objects or base create their Monocle.
const hostileNamespace = "hostile-admission"

// Manifests are written in YAML flow style; js quotes a string for it.
func hostileQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func hostileManifest(name, spec string) string {
	return fmt.Sprintf("apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata:\n  name: %s\nspec: %s\n", hostileQuote(name), spec)
}

const (
	// hostileGitHubConfig has a GitHub crawler reading GITHUB_TOKEN.
	hostileGitHubConfig = "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: \"2024-01-01\"\n        provider:\n          github_organization: change-metrics\n"
	// hostileTokensSecret provides GITHUB_TOKEN.
	hostileTokensSecret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tokens\nstringData:\n  GITHUB_TOKEN: not-a-real-token\n"
	// hostileFakeToken looks like a GitHub token; it must never be repeated in a status.
	hostileFakeToken = "ghp_R3aLl00kingT0kenButF4keABCDEFGHIJ01"
)

// hostileBaseSpec is the spec of a good Monocle with data worth keeping.
var hostileBaseSpec = `{storageSize: 2Gi, secretRef: {name: tokens}, config: ` + hostileQuote(hostileGitHubConfig) + `}`

// hostileConfigSpec is a spec holding config.yaml content.
func hostileConfigSpec(config string) string { return `{config: ` + hostileQuote(config) + `}` }

func hostileInvalidConfig(name, config string, message ...string) hostileCase {
	return hostileCase{name: name, manifest: hostileManifest("m", hostileConfigSpec(config)),
		condition: &hostileCondition{typ: "ConfigValid", status: "False", reason: "InvalidConfig", message: message}}
}

func hostileRejectedCreate(name, monocle, spec string, rejected ...string) hostileCase {
	return hostileCase{name: name, manifest: hostileManifest(monocle, spec), rejected: rejected}
}

// hostileTenantRejected is hostileRejectedCreate run by the namespace's tenant.
func hostileTenantRejected(name, monocle, spec string, rejected ...string) hostileCase {
	c := hostileRejectedCreate(name, monocle, spec, rejected...)
	c.tenant = true
	return c
}

// hostileProxyPassword is the password of the proxy credentials Secret of the cases: it must
// be in no pod, Deployment or Job.
const hostileProxyPassword = "pr0xy-S3cret-do-not-leak"

// hostileProxyCredentials is the basic-auth Secret "proxy-credentials" of the cases.
const hostileProxyCredentials = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: proxy-credentials\ntype: kubernetes.io/basic-auth\nstringData:\n  username: monocle\n  password: " + hostileProxyPassword + "\n"

func hostileRejectedPatch(name, base, patch string, rejected ...string) hostileCase {
	return hostileCase{name: name, objects: hostileTokensSecret, base: base, patch: patch, rejected: rejected}
}

// hostileCases are the cases of TestHostileMonocles.
func hostileCases() []hostileCase {
	aliasBomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 1, "a"; i < 9; i++ {
		cur := string(rune('a' + i))
		aliasBomb += fmt.Sprintf("%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", cur, cur, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = cur
	}
	aliasBomb += "workspaces: [{name: demo, crawlers: []}]\n"
	routeLabels := make([]string, 65)
	for i := range routeLabels {
		routeLabels[i] = fmt.Sprintf("l%d: v", i)
	}
	withClass := `{storageClassName: kwok-volume, storageSize: 2Gi, secretRef: {name: tokens}, config: ` + hostileQuote(hostileGitHubConfig) + `}`

	return []hostileCase{
		// Wrong types.
		hostileRejectedCreate("replicas as a string", "t-replicas-string", `{api: {replicas: three}}`, "spec.api.replicas", "integer"),
		hostileRejectedCreate("config as a mapping", "t-config-mapping", `{config: {workspaces: []}}`, "spec.config"),
		hostileRejectedCreate("config as a number", "t-config-number", `{config: 42}`, "spec.config", "string"),
		hostileRejectedCreate("spec as a list", "t-spec-list", `[a, b]`, "spec in body must be of type object"),
		hostileRejectedCreate("storageSize as a boolean", "t-size-bool", `{storageSize: true}`, "spec.storageSize"),
		// Storage size.
		hostileRejectedCreate("storageSize not a quantity", "t-size-banana", `{storageSize: banana}`, "spec.storageSize"),
		hostileRejectedCreate("storageSize below 1Gi", "t-size-small", `{storageSize: 512Mi}`, "spec.storageSize", "at least 1Gi"),
		hostileRejectedCreate("storageSize negative", "t-size-negative", `{storageSize: -5Gi}`, "spec.storageSize", "at least 1Gi"),
		hostileRejectedCreate("storageSize in bytes", "t-size-bytes", `{storageSize: 5}`, "spec.storageSize", "at least 1Gi"),
		hostileRejectedCreate("storageSize absurdly large", "t-size-absurd", `{storageSize: 99999999999999999999Pi}`, "spec.storageSize", "at most 64Ti"),
		hostileRejectedCreate("storageSize above 64Ti", "t-size-65ti", `{storageSize: 65Ti}`, "spec.storageSize", "at most 64Ti"),
		// Ranges.
		hostileRejectedCreate("replicas above 20", "t-replicas-many", `{api: {replicas: 21}}`, "spec.api.replicas", "less than or equal to 20"),
		hostileRejectedCreate("replicas negative", "t-replicas-negative", `{api: {replicas: -1}}`, "spec.api.replicas", "greater than or equal to 0"),
		// URLs.
		hostileRejectedCreate("publicURL with a javascript scheme", "t-url-js", `{publicURL: "javascript:alert(1)"}`, "spec.publicURL", "http:// or https://"),
		hostileRejectedCreate("publicURL with a header injection", "t-url-newline", `{publicURL: "https://m.example.com/\nX-Injected: 1"}`, "spec.publicURL"),
		hostileRejectedCreate("publicURL with credentials", "t-url-credentials", `{publicURL: "https://admin:secret@m.example.com/"}`, "spec.publicURL"),
		hostileRejectedCreate("route host with a path", "t-route-host", `{route: {host: "evil.example.com/x?y=1"}}`, "spec.route.host"),
		hostileRejectedCreate("too many route labels", "t-route-labels", `{route: {labels: {`+strings.Join(routeLabels, ", ")+`}}}`, "spec.route.labels"),
		// Exposure.
		hostileRejectedCreate("ingress without host", "t-ingress-nohost", `{ingress: {className: nginx}}`, "spec.ingress.host", "Required"),
		hostileRejectedCreate("ingress wildcard host", "t-ingress-wildcard", `{ingress: {host: "*.example.com"}}`, "spec.ingress.host"),
		hostileRejectedCreate("ingress issuer of an unknown kind", "t-ingress-issuer", `{ingress: {host: m.example.com, tls: {issuerRef: {name: le, kind: Certificate}}}}`, "spec.ingress.tls.issuerRef.kind", "Unsupported value"),
		hostileRejectedCreate("httpRoute without parents", "t-httproute-noparent", `{httpRoute: {hostnames: [m.example.com]}}`, "spec.httpRoute.parentRefs", "Required"),
		hostileRejectedCreate("httpRoute hostname with a path", "t-httproute-path", `{httpRoute: {parentRefs: [{name: gw}], hostnames: ["m.example.com/x"]}}`, "spec.httpRoute.hostnames[0]"),
		// Storage growth.
		hostileRejectedCreate("storage growth below the storage size", "t-growth-max", `{storageSize: 10Gi, storageGrowth: {maxSize: 5Gi}}`,
			"spec.storageGrowth.maxSize", "storageGrowth.maxSize must be larger than storageSize"),
		hostileRejectedCreate("storage growth without a maximum", "t-growth-nomax", `{storageGrowth: {step: 1Gi}}`, "spec.storageGrowth.maxSize", "Required"),
		hostileRejectedCreate("storage growth step under 1Gi", "t-growth-step", `{storageGrowth: {maxSize: 5Gi, step: 100Mi}}`,
			"spec.storageGrowth.step", "storageGrowth.step must be a quantity of at least 1Gi"),
		hostileRejectedCreate("storage growth beyond 64Ti", "t-growth-huge", `{storageGrowth: {maxSize: 1Pi}}`, "spec.storageGrowth.maxSize"),
		// Backups and restores.
		hostileRejectedCreate("restore with nowhere to read from", "t-restore-nowhere", `{restore: {snapshot: nightly}}`,
			"spec.restore", "restore needs restore.repository, or backup whose repository holds the snapshot"),
		hostileRejectedCreate("backup on a volume and in S3", "t-backup-both", `{backup: {repository: {volume: {}, s3: {bucket: b, secretRef: {name: s}}}}}`,
			"spec.backup.repository", "set at most one of volume, s3 and existing"),
		hostileRejectedCreate("backup in S3 and an existing repository", "t-backup-s3-existing", `{backup: {repository: {existing: team, s3: {bucket: bucket, secretRef: {name: s}}}}}`,
			"spec.backup.repository", "set at most one of volume, s3 and existing"),
		// An Elasticsearch of one's own.
		hostileRejectedCreate("elasticsearchRef and external", "t-es-both", `{elasticsearch: {elasticsearchRef: {name: es}, external: {url: "http://es.example.com:9200"}}}`,
			"spec.elasticsearch", "set at most one of elasticsearchRef and external"),
		hostileRejectedCreate("credentials in the external URL", "t-es-userinfo", `{elasticsearch: {external: {url: "https://elastic:secret@es.example.com:9243"}}}`,
			"spec.elasticsearch.external.url", "without credentials (use credentialsSecretRef)"),
		hostileRejectedCreate("a path in the external URL", "t-es-path", `{elasticsearch: {external: {url: "http://es.example.com:9200/prefix"}}}`,
			"spec.elasticsearch.external.url", "without credentials (use credentialsSecretRef) or path"),
		hostileRejectedCreate("a bundled node's heap with an external cluster", "t-es-heap", `{elasticsearch: {external: {url: "http://es.example.com:9200"}, javaOpts: "-Xmx1g"}}`,
			"spec.elasticsearch", "leave them unset with elasticsearchRef or external"),
		hostileRejectedCreate("negative index replicas", "t-es-replicas", `{elasticsearch: {indexReplicas: -1}}`,
			"spec.elasticsearch.indexReplicas", "greater than or equal to 0"),
		hostileRejectedCreate("restore from a volume without a claim", "t-restore-noclaim", `{restore: {snapshot: s, repository: {volume: {storageSize: 1Gi}}}}`,
			"spec.restore", "restore.repository names an s3 bucket, or a volume by its claimName"),
		hostileRejectedCreate("keep 0 snapshots", "t-backup-keep0", `{backup: {keep: 0}}`, "spec.backup.keep", "greater than or equal to 1"),
		hostileRejectedCreate("snapshot name with a path", "t-restore-path", `{backup: {}, restore: {snapshot: "../x"}}`, "spec.restore.snapshot"),
		hostileRejectedCreate("S3 bucket with a path", "t-backup-bucket", `{backup: {repository: {s3: {bucket: "b/../c", secretRef: {name: s}}}}}`, "spec.backup.repository.s3.bucket"),
		hostileRejectedCreate("S3 without credentials", "t-backup-nosecret", `{backup: {repository: {s3: {bucket: b}}}}`, "spec.backup.repository.s3.secretRef", "Required"),
		hostileRejectedCreate("backup claim of another namespace", "t-backup-claim", `{backup: {repository: {volume: {claimName: "ns/claim"}}}}`, "spec.backup.repository.volume.claimName"),
		{name: "backup schedule not cron", manifest: hostileManifest("m", `{backup: {schedule: "every day at noon"}}`),
			condition: &hostileCondition{typ: "BackupReady", status: "False", reason: "InvalidSchedule", message: []string{"is not a cron schedule"}}},
		hostileRejectedCreate("backup volume below 1Gi", "t-backup-small", `{backup: {repository: {volume: {storageSize: 10Mi}}}}`, "spec.backup.repository.volume.storageSize", "at least 1Gi"),
		// Maintenance requests.
		hostileRejectedCreate("commitDate on a wipe", "t-maint-date", `{maintenance: [{name: a, operation: WipeCrawlerData, workspace: w, crawler: c, commitDate: "2024-01-01"}]}`,
			"spec.maintenance[0]", "commitDate is required by SetCrawlerCommitDate and allowed only there"),
		hostileRejectedCreate("SetCrawlerCommitDate without a date", "t-maint-nodate", `{maintenance: [{name: a, operation: SetCrawlerCommitDate, workspace: w, crawler: c}]}`,
			"spec.maintenance[0]", "commitDate is required"),
		hostileRejectedCreate("unknown maintenance operation", "t-maint-op", `{maintenance: [{name: a, operation: DropIndex, workspace: w, crawler: c}]}`,
			"spec.maintenance[0].operation", "Unsupported value"),
		hostileRejectedCreate("two requests of one name", "t-maint-dup", `{maintenance: [{name: a, operation: WipeCrawlerData, workspace: w, crawler: c}, {name: a, operation: WipeCrawlerData, workspace: w, crawler: d}]}`,
			"spec.maintenance[1]", "Duplicate value"),
		// Pod metadata with a syntax the API server would refuse on the pod template, by a tenant.
		hostileTenantRejected("podLabels value with a space", "t-labels-value", `{api: {podLabels: {team: "a b"}}}`, "spec.api.podLabels.team", "should match"),
		hostileTenantRejected("podLabels value of 64", "t-labels-long", `{crawler: {podLabels: {team: `+strings.Repeat("v", 64)+`}}}`, "spec.crawler.podLabels.team", "Too long"),
		hostileTenantRejected("podLabels key with a space", "t-labels-key", `{crawler: {podLabels: {"cost center": "42"}}}`, "spec.crawler.podLabels", "podLabels keys must be qualified names"),
		hostileTenantRejected("nodeSelector value with a slash", "t-selector-value", `{elasticsearch: {nodeSelector: {pool: "a/b"}}}`, "spec.elasticsearch.nodeSelector.pool", "should match"),
		hostileTenantRejected("nodeSelector key of two slashes", "t-selector-key", `{api: {nodeSelector: {"a/b/c": x}}}`, "spec.api.nodeSelector", "nodeSelector keys must be qualified names"),
		hostileTenantRejected("podAnnotations key with a space", "t-annotations-key", `{jobs: {podAnnotations: {"my note": "free text is fine"}}}`, "spec.jobs.podAnnotations", "podAnnotations keys must be qualified names"),
		// An external Elasticsearch that is the pod itself, its node or the cloud's metadata service, by a tenant.
		hostileTenantRejected("external port out of range", "t-es-port", `{elasticsearch: {external: {url: "http://es.example.com:99999"}}}`,
			"spec.elasticsearch.external.url", "port must be from 1 to 65535"),
		hostileTenantRejected("external on localhost", "t-es-localhost", `{elasticsearch: {external: {url: "http://localhost:9200"}}}`,
			"spec.elasticsearch.external.url", "host must not be localhost"),
		hostileTenantRejected("external on loopback", "t-es-loopback", `{elasticsearch: {external: {url: "http://127.0.0.1:9200"}}}`,
			"spec.elasticsearch.external.url", "host must not be localhost"),
		hostileTenantRejected("external on loopback spelt 127.1", "t-es-loopback-short", `{elasticsearch: {external: {url: "http://127.1:9200"}}}`,
			"spec.elasticsearch.external.url", "host must not be localhost"),
		hostileTenantRejected("external on IPv6 loopback", "t-es-loopback6", `{elasticsearch: {external: {url: "http://[::1]:9200"}}}`,
			"spec.elasticsearch.external.url", "host must not be localhost"),
		hostileTenantRejected("external on IPv4-mapped loopback", "t-es-mapped", `{elasticsearch: {external: {url: "http://[::ffff:127.0.0.1]:9200"}}}`,
			"spec.elasticsearch.external.url", "host must not be localhost"),
		hostileTenantRejected("external on 0.0.0.0", "t-es-unspecified", `{elasticsearch: {external: {url: "http://0.0.0.0:9200"}}}`,
			"spec.elasticsearch.external.url", "host must not be localhost"),
		hostileTenantRejected("external on the metadata service", "t-es-metadata", `{elasticsearch: {external: {url: "http://169.254.169.254"}}}`,
			"spec.elasticsearch.external.url", "host must not be localhost"),
		hostileTenantRejected("external on IPv6 link-local", "t-es-linklocal6", `{elasticsearch: {external: {url: "http://[fe80::1]:9200"}}}`,
			"spec.elasticsearch.external.url", "host must not be localhost"),
		// Proxy credentials in the spec, by a tenant.
		hostileTenantRejected("httpsProxy with credentials", "t-proxy-userinfo", `{proxy: {httpsProxy: "http://user:secret@proxy.example.com:3128"}}`,
			"spec.proxy.httpsProxy", "without credentials (use proxy.credentialsSecretRef)"),
		hostileTenantRejected("httpProxy with a user", "t-proxy-user", `{proxy: {httpProxy: "http://user@proxy.example.com:3128"}}`,
			"spec.proxy.httpProxy", "without credentials (use proxy.credentialsSecretRef)"),
		hostileTenantRejected("proxy credentials without a proxy", "t-proxy-nourl", `{proxy: {credentialsSecretRef: {name: proxy-credentials}}}`,
			"spec.proxy", "credentialsSecretRef needs httpsProxy or httpProxy"),
		{name: "proxy credentials from a Secret", tenant: true, objects: hostileProxyCredentials,
			manifest:  hostileManifest("m", `{proxy: {httpsProxy: "http://proxy.example.com:3128", credentialsSecretRef: {name: proxy-credentials}}}`),
			condition: &hostileCondition{typ: "SecretsReady", status: "True"},
			check:     hostileProxyCredentialsOnlyReferred},
		{name: "proxy credentials Secret missing", tenant: true,
			manifest:  hostileManifest("m", `{proxy: {httpsProxy: "http://proxy.example.com:3128", credentialsSecretRef: {name: gone}}}`),
			condition: &hostileCondition{typ: "SecretsReady", status: "False", reason: "SecretNotFound", message: []string{"gone", "spec.proxy.credentialsSecretRef"}}},
		// Unknown fields.
		hostileRejectedCreate("unknown field", "t-unknown", `{wipeData: true}`, `unknown field "spec.wipeData"`),
		hostileRejectedCreate("unknown nested field", "t-unknown-nested", `{api: {privileged: true}}`, `unknown field "spec.api.privileged"`),
		hostileRejectedCreate("Secret in another namespace", "t-secret-foreign-ns", `{secretRef: {name: tokens, namespace: kube-system}}`, `unknown field "spec.secretRef.namespace"`),
		// Images.
		hostileRejectedCreate("empty image", "t-image-empty", `{image: ""}`, "spec.image"),
		hostileRejectedCreate("image with arguments", "t-image-args", `{image: "quay.io/change-metrics/monocle:1.11.2 --privileged"}`, "spec.image"),
		hostileRejectedCreate("empty Elasticsearch image", "t-es-image-empty", `{elasticsearch: {image: ""}}`, "spec.elasticsearch.image"),
		// Huge strings.
		hostileRejectedCreate("huge title", "t-huge-title", `{api: {title: `+hostileQuote(strings.Repeat("T", 100_000))+`}}`, "spec.api.title", "Too long"),
		hostileRejectedCreate("huge javaOpts", "t-huge-javaopts", `{elasticsearch: {javaOpts: `+hostileQuote(strings.Repeat("-Xmx1g ", 1000))+`}}`, "spec.elasticsearch.javaOpts", "Too long"),
		hostileRejectedCreate("config over 1 MiB", "t-huge-config", hostileConfigSpec(hostileGitHubConfig+"#"+strings.Repeat("x", 1<<20)), "spec.config", "Too long"),
		// Names.
		hostileRejectedCreate("name of 41 characters", strings.Repeat("n", 41), `{}`, "metadata.name must be at most 40 characters"),
		hostileRejectedCreate("name with shell characters", "x;rm -rf", `{}`, "metadata.name"),
		hostileRejectedCreate("name starting with a digit", "1monocle", `{}`, "metadata.name must be at most 40 characters"),
		hostileRejectedCreate("name with a dot", "mon.ocle", `{}`, "metadata.name must be at most 40 characters"),
		{name: "label value injection", rejected: []string{"metadata.labels"},
			manifest: "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata:\n  name: t-label\n  labels:\n    app.kubernetes.io/instance: \"x; rm -rf /\"\nspec: {}\n"},
		// References.
		hostileRejectedCreate("invalid StorageClass name", "t-class-invalid", `{storageClassName: Fast_SSD}`, "spec.storageClassName"),
		hostileRejectedCreate("secretRef path traversal", "t-secret-traversal", `{secretRef: {name: ../etc}}`, "spec.secretRef.name"),
		hostileRejectedCreate("secretRef without name", "t-secret-noname", `{secretRef: {}}`, "spec.secretRef.name", "Required"),

		// Updates that would destroy data.
		hostileRejectedPatch("storage shrink", hostileBaseSpec, `{"spec":{"storageSize":"1Gi"}}`, "spec.storageSize", "cannot shrink"),
		hostileRejectedPatch("storageSize removed after growing", hostileBaseSpec, `{"spec":{"storageSize":null}}`, "spec.storageSize", "cannot shrink"),
		hostileRejectedPatch("storageSize garbage on update", hostileBaseSpec, `{"spec":{"storageSize":"lots"}}`, "spec.storageSize"),
		hostileRejectedPatch("storageClassName set after creation", hostileBaseSpec, `{"spec":{"storageClassName":"kwok-volume"}}`, "spec.storageClassName", "cannot be changed"),
		hostileRejectedPatch("storageClassName changed", withClass, `{"spec":{"storageClassName":"fast"}}`, "spec.storageClassName", "cannot be changed"),
		hostileRejectedPatch("storageClassName unset", withClass, `{"spec":{"storageClassName":null}}`, "spec.storageClassName", "cannot be changed"),
		hostileRejectedPatch("image emptied", hostileBaseSpec, `{"spec":{"image":""}}`, "spec.image"),
		{name: "whole Monocle re-applied without storage", objects: hostileTokensSecret, base: withClass,
			manifest: hostileManifest("m", `{secretRef: {name: tokens}, config: `+hostileQuote(hostileGitHubConfig)+`}`),
			rejected: []string{"spec.storageClassName", "spec.storageSize", "cannot shrink"}},
		{name: "unknown field in a patch is dropped", objects: hostileTokensSecret, base: hostileBaseSpec,
			patch: `{"spec":{"wipeData":true}}`, warned: []string{`unknown field "spec.wipeData"`}},

		// Invalid config.yaml: accepted by the API server, refused by the operator.
		hostileInvalidConfig("config not YAML", "workspaces: [\n", "not valid YAML"),
		hostileInvalidConfig("config not a mapping", "- name: demo\n", "must be a mapping"),
		hostileInvalidConfig("config without workspaces", "about: {links: []}\n", "workspaces: is required"),
		hostileInvalidConfig("workspace name Monocle refuses", "workspaces:\n  - name: Bad Name\n    crawlers: []\n",
			`workspaces[0].name: "Bad Name" is not a valid workspace name`),
		hostileInvalidConfig("duplicate workspaces", "workspaces:\n  - {name: demo, crawlers: []}\n  - {name: demo, crawlers: []}\n",
			"workspaces[1].name", "must be unique"),
		hostileInvalidConfig("unknown provider", "workspaces:\n  - name: demo\n    crawlers:\n      - {name: j, update_since: \"2024-01-01\", provider: {jira_url: \"https://jira.example.com\"}}\n",
			"workspaces[0].crawlers[0].provider"),
		hostileInvalidConfig("duplicate crawlers", "workspaces:\n  - name: demo\n    crawlers:\n      - {name: c, update_since: \"2024-01-01\", provider: TaskDataProvider}\n      - {name: c, update_since: \"2024-01-01\", provider: TaskDataProvider}\n",
			"workspaces[0].crawlers[1].name"),
		hostileInvalidConfig("YAML alias bomb", aliasBomb, "config.yaml"),
		hostileInvalidConfig("search alias Monocle's API refuses",
			"workspaces:\n  - name: demo\n    crawlers: []\n    search_aliases:\n      - {name: yesterday, alias: \"from:hier\"}\n",
			"workspaces[0].search_aliases[0].alias", `"yesterday"`, "Invalid date: hier"),
		{name: "search alias update Monocle's API refuses", objects: hostileTokensSecret, base: hostileBaseSpec,
			patch: `{"spec":{"config":` + hostileQuote(hostileGitHubConfig+"    search_aliases:\n      - {name: open, alias: \"(state:open\"}\n") + `}}`,
			condition: &hostileCondition{typ: "ConfigValid", status: "False", reason: "InvalidConfig",
				message: []string{"workspaces[0].search_aliases[0].alias", "Expected closing paren `)`, at character 11"}},
			check: hostileConfigMapWithout("search_aliases")},
		{name: "token pasted in config", manifest: hostileManifest("m", hostileConfigSpec(
			"workspaces:\n  - name: demo\n    crawlers:\n      - {name: gh, update_since: \"2024-01-01\", provider: {github_organization: o, github_token: "+hostileFakeToken+"}}\n")),
			condition: &hostileCondition{typ: "ConfigValid", status: "False", reason: "InvalidConfig",
				message: []string{"github_token", "looks like a token"}, notMessage: []string{hostileFakeToken, hostileFakeToken[:12]}}},
		{name: "invalid config near the size limit", manifest: hostileManifest("m", hostileConfigSpec("workspaces: [{name: "+strings.Repeat("Z", 900_000)+", crawlers: []}]\n")),
			condition: &hostileCondition{typ: "ConfigValid", status: "False", reason: "InvalidConfig", message: []string{"workspaces[0].name"}},
			check:     func(ns string) error { return hostileMessageAtMost(ns, "m", "ConfigValid", 4096) }},

		// Missing or foreign objects.
		{name: "secretRef to a missing Secret", manifest: hostileManifest("m", `{secretRef: {name: gone}}`),
			condition: &hostileCondition{typ: "SecretsReady", status: "False", reason: "SecretNotFound", message: []string{"gone"}}},
		{name: "secretRef to a ConfigMap", objects: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tokens\ndata:\n  GITHUB_TOKEN: x\n",
			manifest:  hostileManifest("m", `{secretRef: {name: tokens}, config: `+hostileQuote(hostileGitHubConfig)+`}`),
			condition: &hostileCondition{typ: "SecretsReady", status: "False", reason: "SecretNotFound"}},
		{name: "token variable no Secret provides", objects: hostileTokensSecret,
			manifest:  hostileManifest("m", `{secretRef: {name: tokens}, config: `+hostileQuote("workspaces:\n  - name: demo\n    crawlers:\n      - {name: gl, update_since: \"2024-01-01\", provider: {gitlab_organization: o}}\n")+`}`),
			condition: &hostileCondition{typ: "SecretsReady", status: "False", reason: "TokenMissing", message: []string{"GITLAB_TOKEN"}}},
		{name: "name taken by a foreign ConfigMap", objects: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m-api\ndata:\n  config.yaml: mine\n",
			manifest: hostileManifest("m", `{}`), condition: &hostileCondition{typ: "Degraded", status: "True", reason: "NameConflict", message: []string{"m-api"}},
			check: func(ns string) error { return hostileConfigMapHolds(ns, "m-api", "config.yaml", "mine") }},
		{name: "name taken by a foreign Service", objects: "apiVersion: v1\nkind: Service\nmetadata:\n  name: m-elastic\nspec:\n  ports: [{port: 9200}]\n",
			manifest: hostileManifest("m", `{}`), condition: &hostileCondition{typ: "Degraded", status: "True", reason: "NameConflict", message: []string{"m-elastic"}}},
		{name: "name taken by a foreign Secret", objects: "apiVersion: v1\nkind: Secret\nmetadata:\n  name: m-api\nstringData:\n  CRAWLERS_API_KEY: mine\n",
			manifest: hostileManifest("m", `{}`), condition: &hostileCondition{typ: "Degraded", status: "True", reason: "NameConflict", message: []string{"m-api"}},
			check: func(ns string) error { return hostileSecretHolds(ns, "m-api", "CRAWLERS_API_KEY", "mine") }},
		{name: "impostor of the control Monocle", namespace: hostileControlNamespace, manifest: "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata:\n  name: impostor\n  labels:\n    app.kubernetes.io/instance: control\n    app.kubernetes.io/managed-by: monocle-operator\nspec:\n  secretRef: {name: control-api}\n",
			condition: &hostileCondition{monocle: "impostor", typ: "Ready", status: "True"}},

		// Hostile updates of a good Monocle: reported, and the data is kept.
		{name: "config update not YAML", objects: hostileTokensSecret, base: hostileBaseSpec, patch: `{"spec":{"config":"workspaces: [\n"}}`,
			condition: &hostileCondition{typ: "ConfigValid", status: "False", reason: "InvalidConfig", message: []string{"not valid YAML"}},
			check:     func(ns string) error { return hostileConfigMapHolds(ns, "m-api", "config.yaml", hostileGitHubConfig) }},
		{name: "secretRef switched to a missing Secret", objects: hostileTokensSecret, base: hostileBaseSpec, patch: `{"spec":{"secretRef":{"name":"gone"}}}`,
			condition: &hostileCondition{typ: "SecretsReady", status: "False", reason: "SecretNotFound", message: []string{"gone"}}},
		{name: "Elasticsearch 8", manifest: hostileManifest("m", `{elasticsearch: {image: "docker.elastic.co/elasticsearch/elasticsearch:8.11.0"}}`),
			condition: &hostileCondition{typ: "SpecAccepted", status: "False", reason: "ElasticsearchVersionUnsupported", message: []string{"Elasticsearch 8"}}},
		{name: "heap as large as the memory limit", manifest: hostileManifest("m", `{elasticsearch: {javaOpts: "-Xms1g -Xmx1g", resources: {limits: {memory: 1Gi}}}}`),
			condition: &hostileCondition{typ: "SpecAccepted", status: "False", reason: "HeapAboveLimit", message: []string{"heap of 1g (1024 MiB) for a memory limit of 1Gi"}}},
		{name: "Elasticsearch downgrade", objects: hostileTokensSecret, base: hostileBaseSpec,
			patch:     `{"spec":{"elasticsearch":{"image":"docker.elastic.co/elasticsearch/elasticsearch:7.10.2"}}}`,
			condition: &hostileCondition{typ: "SpecAccepted", status: "False", reason: "ElasticsearchDowngrade", message: []string{"older than the running"}}},
		{name: "config update needs a missing token", objects: hostileTokensSecret, base: hostileBaseSpec,
			patch:     `{"spec":{"config":` + hostileQuote("workspaces:\n  - name: demo\n    crawlers:\n      - {name: bz, update_since: \"2024-01-01\", provider: {bugzilla_url: \"https://bugzilla.example.com\"}}\n") + `}}`,
			condition: &hostileCondition{typ: "SecretsReady", status: "False", reason: "TokenMissing", message: []string{"BUGZILLA_TOKEN"}}},
	}
}

// hostileConfigMapWithout returns a check that the config.yaml the pods of Monocle "m" read
// (ConfigMap m-api) does not contain text: a refused config never reaches it.
func hostileConfigMapWithout(text string) func(ns string) error {
	return func(ns string) error {
		out, err := hostileKubectl("", "get", "-n", ns, "configmap", "m-api", "-o", "jsonpath={.data.config\\.yaml}")
		switch {
		case err != nil:
			return fmt.Errorf("reading ConfigMap m-api: %v: %s", err, out)
		case !strings.Contains(out, "workspaces"):
			return fmt.Errorf("ConfigMap m-api holds no config: %q", out)
		case strings.Contains(out, text):
			return fmt.Errorf("the refused config reached ConfigMap m-api: it contains %q", text)
		}
		return nil
	}
}

// hostileProxyCredentialsOnlyReferred checks that the API's and the crawler's pods of Monocle
// "m" read the proxy's credentials from the Secret "proxy-credentials" by secretKeyRef, that
// their proxy URL refers to them, and that the password is in no pod, Deployment or Job.
func hostileProxyCredentialsOnlyReferred(ns string) error {
	var pods corev1.PodList
	err := testkit.Poll(context.Background(), time.Second, 120*time.Second, "the API's and the crawler's pods exist", func(ctx context.Context) error {
		list, err := hostileAPI.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: resources.InstanceLabel + "=m"})
		if err != nil {
			return err
		}
		var components []string
		for _, p := range list.Items {
			components = append(components, p.Labels[resources.ComponentLabel])
		}
		if !slices.Contains(components, resources.ComponentAPI) || !slices.Contains(components, resources.ComponentCrawler) {
			return fmt.Errorf("pods of components %v", components)
		}
		pods = *list
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		component := p.Labels[resources.ComponentLabel]
		if component != resources.ComponentAPI && component != resources.ComponentCrawler {
			continue
		}
		c := p.Spec.Containers[slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == component })]
		refs := map[string]string{}
		var httpsProxy string
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "proxy-credentials" {
				refs[e.Name] = e.ValueFrom.SecretKeyRef.Key
			}
			if e.Name == "https_proxy" {
				httpsProxy = e.Value
			}
		}
		if want := map[string]string{resources.ProxyUsernameVar: "username", resources.ProxyPasswordVar: "password"}; !maps.Equal(refs, want) {
			return fmt.Errorf("pod %s reads %v from Secret proxy-credentials, want %v", p.Name, refs, want)
		}
		if want := "http://$(MONOCLE_PROXY_USERNAME):$(MONOCLE_PROXY_PASSWORD)@proxy.example.com:3128"; httpsProxy != want {
			return fmt.Errorf("pod %s: https_proxy=%q, want %q", p.Name, httpsProxy, want)
		}
	}
	for _, kind := range []string{"pods", "deployments", "replicasets", "jobs", "monocles"} {
		out, err := hostileKubectl("", "get", "-n", ns, kind, "-o", "json")
		if err != nil {
			return fmt.Errorf("listing %s: %v: %s", kind, err, out)
		}
		if strings.Contains(out, hostileProxyPassword) {
			return fmt.Errorf("the proxy password is in the %s of namespace %s", kind, ns)
		}
	}
	return nil
}
