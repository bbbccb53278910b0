package monocleconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/change-metrics/monocle-operator/pkg/monocleconfig/search"
)

// MaxSize is the longest config.yaml Parse reads, in bytes: 1 MiB, the maxLength of
// spec.config in the CRD. (The CRD counts characters; a config of multi-byte characters can
// pass the CRD and still be refused here.)
const MaxSize = 1 << 20

// DefaultCrawlersAPIKeyVariable is the environment variable a workspace reads the crawlers'
// API key from when it sets no crawlers_api_key (loadConfig in src/Monocle/Config.hs).
const DefaultCrawlersAPIKeyVariable = "CRAWLERS_API_KEY"

// Config is a parsed config.yaml: what the operator needs to know of it.
type Config struct {
	// Workspaces are the workspaces, in file order; there is at least one and their names
	// are unique.
	Workspaces []Workspace
	// OIDCClientSecretVariable is the environment variable the API reads the OIDC client
	// secret from when auth.auth_provider is an OIDC provider:
	// MONOCLE_OIDC_<NAME>_CLIENT_SECRET with the provider name upper-cased and spaces made
	// underscores (getAuthProvider in src/Monocle/Config.hs). Without it the API runs with
	// authentication disabled. Empty when no OIDC provider is configured.
	OIDCClientSecretVariable string
}

// Workspace is one entry of workspaces: a Monocle tenant with its own Elasticsearch index.
type Workspace struct {
	// Name is the workspace name; ValidateWorkspaceName accepts it.
	Name string
	// CrawlersAPIKeyVariable is the environment variable holding the key crawlers of this
	// workspace present to the API: crawlers_api_key, else DefaultCrawlersAPIKeyVariable.
	// Monocle's API and crawler exit at start when it is not set.
	CrawlersAPIKeyVariable string
	// Crawlers are the workspace's crawlers, in file order, with unique names.
	Crawlers []Crawler
	// Projects are the names of the workspace's projects.
	Projects []string
	// Idents are the workspace's identities; `monocle janitor update-idents` re-applies them.
	Idents []Ident
	// Groups are the sorted, de-duplicated group names the idents belong to.
	Groups []string
	// SearchAliases are the workspace's named search queries.
	SearchAliases []SearchAlias
}

// Crawler is one crawler of a workspace.
type Crawler struct {
	// Name is the crawler's name, unique in its workspace.
	Name string
	// Provider is what the crawler crawls: one of the Provider* constants.
	Provider string
	// TokenVariable is the environment variable the crawler reads its token (or Gerrit
	// password) from: the provider's token key when set, else its default (GITHUB_TOKEN,
	// GITLAB_TOKEN, GERRIT_PASSWORD, BUGZILLA_TOKEN); "" when the crawler reads none.
	TokenVariable string
	// UpdateSince is update_since, the date crawling starts from.
	UpdateSince string
	// Entities are the provider keys that name what the crawler crawls (see EntityFilter).
	Entities Entities
}

// Ident is one identity of a workspace: a person and the provider accounts that are theirs.
type Ident struct {
	// Ident is the identity's display name.
	Ident string
	// Aliases are the provider accounts, as "github.com/jane".
	Aliases []string
	// Groups are the groups the identity belongs to.
	Groups []string
}

// SearchAlias is a named search query of a workspace.
type SearchAlias struct {
	// Name is how users refer to the query.
	Name string
	// Alias is the query, in Monocle's search language.
	Alias string
}

// TokenVariables returns the sorted, de-duplicated environment variables the crawlers read
// tokens from, across all workspaces.
func (c *Config) TokenVariables() []string {
	var out []string
	for _, w := range c.Workspaces {
		for _, cr := range w.Crawlers {
			if cr.TokenVariable != "" {
				out = append(out, cr.TokenVariable)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CrawlersAPIKeyVariables returns the sorted, de-duplicated environment variables the
// workspaces read the crawlers' API key from; the API and the crawler exit at start when one
// is unset. It includes DefaultCrawlersAPIKeyVariable when a workspace sets no
// crawlers_api_key.
func (c *Config) CrawlersAPIKeyVariables() []string {
	out := make([]string, 0, len(c.Workspaces))
	for _, w := range c.Workspaces {
		out = append(out, w.CrawlersAPIKeyVariable)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Parse parses and validates the content of a config.yaml as Monocle 1.11.2 loads it (see
// the package documentation), plus these rules Monocle does not check when loading:
//   - workspaces is not empty (Monocle would serve nothing);
//   - workspace names are unique and fit an Elasticsearch index name (MaxWorkspaceNameBytes):
//     two workspaces of one name would share one index;
//   - crawler names are not empty and are unique in their workspace: the crawler keeps its
//     progress in the index under its name, so two of one name corrupt each other's state;
//   - update_since is a date the crawler parses;
//   - token variable names are environment variable names, not tokens;
//   - auth.auth_provider is not a GitHub provider, which makes Monocle 1.11.2's API exit;
//   - every search alias is a query Monocle's API accepts when it starts.
//
// Unknown keys are accepted at every level, as Monocle ignores them. The error is an *Error
// locating the first problem found.
//
// Parse is a pure function of data, and the operator calls it on every sync: it keeps the
// results of the last few documents (by their SHA-256), so a large config costs its parse
// once. The returned Config is shared: callers must not modify it.
func Parse(data string) (*Config, error) {
	return parseCache.get(data, parse)
}

// parse is Parse without the cache.
func parse(data string) (*Config, error) {
	if len(data) > MaxSize {
		return nil, newError("", ReasonTooLarge, fmt.Sprintf("config.yaml is %d bytes, more than the %d allowed", len(data), MaxSize))
	}
	doc, perr := decodeYAML(data)
	if perr != nil {
		return nil, perr
	}
	if doc == nil {
		return nil, newError("", ReasonSyntax, "config.yaml is empty: it needs a workspaces list")
	}
	root, err := asObject("", doc)
	if err != nil {
		if err.Reason == ReasonWrongType {
			err = newError("", ReasonSyntax, fmt.Sprintf("config.yaml must be a mapping with a workspaces list, not %s", typeName(doc)))
		}
		return nil, err
	}
	c, err := parseConfig(root)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func parseConfig(root object) (*Config, *Error) {
	if err := checkAbout(root); err != nil {
		return nil, err
	}
	oidcVar, err := checkAuth(root)
	if err != nil {
		return nil, err
	}
	if root.has("crawlers") {
		crawlers, err := asObject("crawlers", root.m["crawlers"])
		if err != nil {
			return nil, err
		}
		if err := crawlers.optNatural("loop_delay_sec"); err != nil {
			return nil, err
		}
	}
	items, err := root.objects("workspaces", false)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, newError("workspaces", ReasonInvalid, "must list at least one workspace")
	}
	workspaces, err := parseNamed(items, parseWorkspace, func(w Workspace) string { return w.Name },
		"%s is already the name of workspaces[%d]: workspace names must be unique")
	if err != nil {
		return nil, err
	}
	return &Config{Workspaces: workspaces, OIDCClientSecretVariable: oidcVar}, nil
}

// parseNamed parses items in order with parse, and refuses with ReasonDuplicate, at its
// name, an item whose name (as name gives it) an earlier item has: dupFormat, a format of
// the quoted name (%s) and the index of the earlier item (%d), says so. It returns nil for
// no items.
func parseNamed[T any](items []object, parse func(object) (T, *Error), name func(T) string, dupFormat string) ([]T, *Error) {
	var out []T
	seen := make(map[string]int, len(items))
	for i, item := range items {
		v, err := parse(item)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[name(v)]; dup {
			return nil, newError(keyPath(item.path, "name"), ReasonDuplicate, fmt.Sprintf(dupFormat, quote(name(v)), j))
		}
		seen[name(v)] = i
		out = append(out, v)
	}
	return out, nil
}

// checkAbout checks the optional about section: {links: [{name, url, category?}]}
// (About/Type.dhall, Link/Type.dhall).
func checkAbout(root object) *Error {
	if !root.has("about") {
		return nil
	}
	about, err := asObject("about", root.m["about"])
	if err != nil {
		return err
	}
	links, err := about.objects("links", false)
	if err != nil {
		return err
	}
	for _, l := range links {
		if err := firstError(textErr(l.text("name")), textErr(l.text("url")), optTextErr(l.optText("category"))); err != nil {
			return err
		}
	}
	return nil
}

// checkAuth checks the optional auth section (Auth/Type.dhall, Auth/Provider.dhall) and
// returns the OIDC client secret variable of its auth_provider.
func checkAuth(root object) (string, *Error) {
	if !root.has("auth") {
		return "", nil
	}
	auth, err := asObject("auth", root.m["auth"])
	if err != nil {
		return "", err
	}
	if err := auth.optBool("enforce_auth"); err != nil {
		return "", err
	}
	v, err := auth.required("auth_provider")
	if err != nil {
		return "", err
	}
	kind, oidcName, err := parseAuthProvider("auth.auth_provider", v)
	if err != nil {
		return "", err
	}
	if kind == authGitHub {
		return "", newError("auth.auth_provider", ReasonUnsupported,
			"is a GitHub OAuth provider (github_oauth_name, github_oauth_client_id), which Monocle 1.11.2 does not support: its API exits at start; use an OIDC provider")
	}
	extras, err := auth.optList("extra_auth_providers")
	if err != nil {
		return "", err
	}
	for i, e := range extras {
		if _, _, err := parseAuthProvider(indexPath("auth.extra_auth_providers", i), e); err != nil {
			return "", err
		}
	}
	return "MONOCLE_OIDC_" + strings.ReplaceAll(strings.ToUpper(oidcName), " ", "_") + "_CLIENT_SECRET", nil
}

const (
	authGitHub = "github"
	authOIDC   = "oidc"
)

// parseAuthProvider matches v against the alternatives of Auth/Provider.dhall in Monocle's
// order: GithubAuthProvider, then OIDCProvider.
func parseAuthProvider(path string, v any) (kind, oidcName string, _ *Error) {
	o, err := asObject(path, v)
	if err != nil {
		return "", "", err
	}
	if firstError(textErr(o.text("github_oauth_name")), textErr(o.text("github_oauth_client_id"))) == nil {
		return authGitHub, "", nil
	}
	name, err := o.text("oidc_provider_name")
	if err == nil {
		err = firstError(textErr(o.text("oidc_issuer_url")), textErr(o.text("oidc_client_id")), optTextErr(o.optText("oidc_user_claim")))
	}
	if err != nil {
		return "", "", newError(err.Path, err.Reason, err.Message+
			" (an auth provider is OIDC: oidc_provider_name, oidc_issuer_url, oidc_client_id and optionally oidc_user_claim)")
	}
	return authOIDC, name, nil
}

// parseWorkspace reads one workspace (Workspace/Type.dhall).
func parseWorkspace(o object) (Workspace, *Error) {
	var w Workspace
	name, err := o.text("name")
	if err != nil {
		return w, err
	}
	if verr := ValidateWorkspaceName(name); verr != nil {
		return w, newError(keyPath(o.path, "name"), ReasonInvalid,
			fmt.Sprintf("%s is not a valid workspace name: %v", quote(name), verr))
	}
	w.Name = name
	w.CrawlersAPIKeyVariable = DefaultCrawlersAPIKeyVariable
	if v, set, err := o.optText("crawlers_api_key"); err != nil {
		return w, err
	} else if set {
		if verr := validateVariableName(v); verr != nil {
			return w, newError(keyPath(o.path, "crawlers_api_key"), ReasonInvalid, verr.Error())
		}
		w.CrawlersAPIKeyVariable = v
	}

	crawlers, err := o.objects("crawlers", false)
	if err != nil {
		if err.Reason == ReasonMissing {
			err.Message += ": write crawlers: [] for a workspace without crawlers"
		}
		return w, err
	}
	if w.Crawlers, err = parseNamed(crawlers, parseCrawler, func(c Crawler) string { return c.Name },
		"%s is already the name of crawlers[%d] of this workspace: crawler names must be unique in a workspace"); err != nil {
		return w, err
	}

	projects, err := o.objects("projects", true)
	if err != nil {
		return w, err
	}
	for _, p := range projects {
		name, err := p.text("name")
		if err == nil {
			err = firstError(optTextErr(p.optText("repository_regex")), optTextErr(p.optText("branch_regex")), optTextErr(p.optText("file_regex")))
		}
		if err != nil {
			return w, err
		}
		w.Projects = append(w.Projects, name)
	}

	idents, err := o.objects("idents", true)
	if err != nil {
		return w, err
	}
	for _, io := range idents {
		id, err := parseIdent(io)
		if err != nil {
			return w, err
		}
		w.Idents = append(w.Idents, id)
		w.Groups = append(w.Groups, id.Groups...)
	}
	slices.Sort(w.Groups)
	w.Groups = slices.Compact(w.Groups)

	aliases, err := o.objects("search_aliases", true)
	if err != nil {
		return w, err
	}
	for _, a := range aliases {
		name, err := a.text("name")
		if err != nil {
			return w, err
		}
		alias, err := a.text("alias")
		if err != nil {
			return w, err
		}
		w.SearchAliases = append(w.SearchAliases, SearchAlias{Name: name, Alias: alias})
	}
	return w, checkSearchAliases(w, aliases)
}

// checkSearchAliases refuses a search alias Monocle's API refuses when it starts: run' in
// src/Monocle/Main.hs (1.11.2) parses and evaluates every alias of every workspace
// (loadAliases in src/Monocle/Search/Query.hs) and stops with "Invalid aliases" on any error.
// The message gives Monocle's own, and the character it is about.
func checkSearchAliases(w Workspace, objects []object) *Error {
	if len(w.SearchAliases) == 0 {
		return nil
	}
	index := search.Index{}
	for _, p := range w.Projects {
		index.Projects = append(index.Projects, search.Project{Name: p})
	}
	for _, id := range w.Idents {
		index.Idents = append(index.Idents, search.Ident{Ident: id.Ident, Groups: id.Groups})
	}
	for i, a := range w.SearchAliases {
		if perr := search.CheckAlias(index, a.Alias); perr != nil {
			return newError(keyPath(objects[i].path, "alias"), ReasonInvalid, fmt.Sprintf(
				"search alias %s is not a query Monocle runs, and its API would not start (\"Invalid aliases\"): %s, at character %d of %s",
				quote(a.Name), cut(perr.Message), perr.Offset, quote(a.Alias)))
		}
	}
	return nil
}

// parseIdent reads one ident (Ident/Type.dhall): aliases is required, groups optional.
func parseIdent(o object) (Ident, *Error) {
	name, err := o.text("ident")
	if err != nil {
		return Ident{}, err
	}
	aliases, err := o.textList("aliases", false)
	if err != nil {
		return Ident{}, err
	}
	groups, err := o.textList("groups", true)
	if err != nil {
		return Ident{}, err
	}
	return Ident{Ident: name, Aliases: aliases, Groups: groups}, nil
}

// parseCrawler reads one crawler (Crawler/Type.dhall): name, update_since and provider are
// all required.
func parseCrawler(o object) (Crawler, *Error) {
	var cr Crawler
	name, err := o.text("name")
	if err != nil {
		return cr, err
	}
	if name == "" {
		return cr, newError(keyPath(o.path, "name"), ReasonInvalid, "must not be empty")
	}
	cr.Name = name
	since, err := o.text("update_since")
	if err != nil {
		return cr, err
	}
	if verr := validateUpdateSince(since); verr != nil {
		return cr, newError(keyPath(o.path, "update_since"), ReasonInvalid, fmt.Sprintf("%s: %v", quote(since), verr))
	}
	cr.UpdateSince = since
	v, err := o.required("provider")
	if err != nil {
		return cr, err
	}
	cr.Provider, cr.TokenVariable, cr.Entities, err = parseProvider(keyPath(o.path, "provider"), v)
	return cr, err
}
