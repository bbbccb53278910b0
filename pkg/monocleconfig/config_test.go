package monocleconfig

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// full is a config using every section Monocle 1.11.2 knows, one crawler per provider.
const full = `
about:
  links:
    - name: Docs
      url: https://example.com/docs
      category: help
auth:
  enforce_auth: false
  auth_provider:
    oidc_provider_name: Key Cloak
    oidc_issuer_url: https://sso.example.com/realms/x
    oidc_client_id: monocle
crawlers:
  loop_delay_sec: 300
crawlers_api_key: ignored-at-the-top-level
workspaces:
  - name: openstack
    crawlers_api_key: OPENSTACK_API_KEY
    crawlers:
      - name: gerrit-anon
        update_since: "2021-10-01"
        provider:
          gerrit_url: https://review.opendev.org
          gerrit_repositories: ["^zuul/.*"]
      - name: gerrit-login
        update_since: 2021-10-01 00:00:00 UTC
        provider:
          gerrit_url: https://review.example.com
          gerrit_login: bot
      - name: bz
        update_since: 2021-10-01T00:00:00Z
        provider:
          bugzilla_url: https://bugzilla.redhat.com
          bugzilla_token: RH_BZ
          bugzilla_products: [OpenStack]
    projects:
      - name: zuul
        repository_regex: ".*zuul.*"
    idents:
      - ident: Jane Doe
        aliases: [github.com/jane, review.opendev.org/Jane <jane@example.com>]
        groups: [core, ptl]
      - ident: John
        aliases: []
        groups: [core]
    search_aliases:
      - name: mine
        alias: author:jane
  - name: github_and-more.42
    crawlers:
      - name: gh
        update_since: "2024-01-01"
        provider:
          github_organization: change-metrics
          github_repositories: [monocle]
      - name: gh-users
        update_since: "2024-01-01"
        provider:
          github_users: [jane]
          github_token: GH_USERS
      - name: gl
        update_since: "2024-01-01"
        provider:
          gitlab_organization: redhat
          gitlab_token: GL
      - name: app
        update_since: "2024-01-01"
        provider:
          github_app_id: "42"
          github_app_key_path: /key.pem
      - name: td
        update_since: "2024-01-01"
        provider: TaskDataProvider
    groups: []
`

func TestParseFull(t *testing.T) {
	c, err := Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		OIDCClientSecretVariable: "MONOCLE_OIDC_KEY_CLOAK_CLIENT_SECRET",
		Workspaces: []Workspace{{
			Name:                   "openstack",
			CrawlersAPIKeyVariable: "OPENSTACK_API_KEY",
			Crawlers: []Crawler{
				{Name: "gerrit-anon", Provider: ProviderGerrit, UpdateSince: "2021-10-01",
					Entities: Entities{Repositories: []string{"^zuul/.*"}, RepositoriesSet: true}},
				{Name: "gerrit-login", Provider: ProviderGerrit, TokenVariable: "GERRIT_PASSWORD", UpdateSince: "2021-10-01 00:00:00 UTC"},
				{Name: "bz", Provider: ProviderBugzilla, TokenVariable: "RH_BZ", UpdateSince: "2021-10-01T00:00:00Z",
					Entities: Entities{Products: []string{"OpenStack"}}},
			},
			Projects: []string{"zuul"},
			Idents: []Ident{
				{Ident: "Jane Doe", Aliases: []string{"github.com/jane", "review.opendev.org/Jane <jane@example.com>"}, Groups: []string{"core", "ptl"}},
				{Ident: "John", Aliases: []string{}, Groups: []string{"core"}},
			},
			Groups:        []string{"core", "ptl"},
			SearchAliases: []SearchAlias{{Name: "mine", Alias: "author:jane"}},
		}, {
			Name:                   "github_and-more.42",
			CrawlersAPIKeyVariable: "CRAWLERS_API_KEY",
			Crawlers: []Crawler{
				{Name: "gh", Provider: ProviderGitHub, TokenVariable: "GITHUB_TOKEN", UpdateSince: "2024-01-01",
					Entities: Entities{Organization: "change-metrics", Repositories: []string{"monocle"}, RepositoriesSet: true}},
				{Name: "gh-users", Provider: ProviderGitHubUser, TokenVariable: "GH_USERS", UpdateSince: "2024-01-01",
					Entities: Entities{Users: []string{"jane"}}},
				{Name: "gl", Provider: ProviderGitLab, TokenVariable: "GL", UpdateSince: "2024-01-01", Entities: Entities{Organization: "redhat"}},
				{Name: "app", Provider: ProviderGitHubApplication, UpdateSince: "2024-01-01"},
				{Name: "td", Provider: ProviderTaskData, UpdateSince: "2024-01-01"},
			},
		}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", c, want)
	}
	if got, want := c.TokenVariables(), []string{"GERRIT_PASSWORD", "GH_USERS", "GITHUB_TOKEN", "GL", "RH_BZ"}; !reflect.DeepEqual(got, want) {
		t.Errorf("TokenVariables() = %v, want %v", got, want)
	}
	if got, want := c.CrawlersAPIKeyVariables(), []string{"CRAWLERS_API_KEY", "OPENSTACK_API_KEY"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CrawlersAPIKeyVariables() = %v, want %v", got, want)
	}
}

func TestParseAccepts(t *testing.T) {
	tests := map[string]struct {
		config string
		tokens []string
	}{
		"minimal":                {config: "workspaces: [{name: demo, crawlers: []}]", tokens: nil},
		"the operator's default": {config: "workspaces:\n  - name: demo\n    crawlers: []\n"},
		"JSON":                   {config: `{"workspaces": [{"name": "demo", "crawlers": []}]}`},
		"unknown keys everywhere": {config: `
whatever: 1
workspaces:
  - name: demo
    color: blue
    crawlers:
      - name: c
        update_since: "2020-01-01"
        extra: [1, 2]
        provider: {github_organization: o, unknown_key: x}
`, tokens: []string{"GITHUB_TOKEN"}},
		"one variable for many crawlers": {config: `
workspaces:
  - name: a
    crawlers:
      - {name: x, update_since: "2020-01-01", provider: {gitlab_organization: o}}
      - {name: y, update_since: "2020-01-01", provider: {gitlab_organization: p}}
  - name: b
    crawlers:
      - {name: x, update_since: "2020-01-01", provider: {github_organization: o, github_token: GITLAB_TOKEN}}
`, tokens: []string{"GITLAB_TOKEN"}},
		"github and gitlab keys: Github comes first": {config: `
workspaces:
  - name: a
    crawlers:
      - {name: x, update_since: "2020-01-01", provider: {gitlab_organization: o, github_organization: p}}
`, tokens: []string{"GITHUB_TOKEN"}},
		"null optional values": {config: `
workspaces:
  - name: a
    projects: null
    idents: ~
    crawlers:
      - {name: x, update_since: "2020-01-01", provider: {github_organization: o, github_token: null}}
`, tokens: []string{"GITHUB_TOKEN"}},
		"unicode lowercase workspace name": {config: "workspaces: [{name: démo-ß, crawlers: []}]"},
		"unquoted date":                    {config: "workspaces: [{name: a, crawlers: [{name: c, update_since: 2020-01-01, provider: TaskDataProvider}]}]"},
		"date with lowercase t and z":      {config: "workspaces: [{name: a, crawlers: [{name: c, update_since: 2020-01-01t00:00:00z, provider: TaskDataProvider}]}]"},
		"loop_delay_sec as 1e3":            {config: "crawlers: {loop_delay_sec: 1e3}\nworkspaces: [{name: a, crawlers: []}]"},
		"YAML 1.2: yes, no, on, off and y are strings": {config: "workspaces: [{name: 'on', crawlers: [{name: no, update_since: '2020-01-01', provider: {gerrit_url: y, gerrit_login: off}}]}]",
			tokens: []string{"GERRIT_PASSWORD"}},
		"leading document marker":     {config: "---\nworkspaces: [{name: a, crawlers: []}]\n..."},
		"anchors and aliases":         {config: "x: &c []\nworkspaces: [{name: a, crawlers: *c}, {name: b, crawlers: *c}]"},
		"workspace name of 237 bytes": {config: "workspaces: [{name: " + strings.Repeat("a", MaxWorkspaceNameBytes) + ", crawlers: []}]"},
		// The alias of Monocle's README (1.11.2), and one using the workspace's project and group.
		"search aliases Monocle runs": {config: `workspaces:
  - name: a
    crawlers: []
    projects: [{name: nova}]
    idents: [{ident: Jane, aliases: [], groups: [core]}]
    search_aliases:
      - name: bots
        alias: '(author:"github-actions" or author:"bedevere-bot")'
      - name: mine
        alias: project:nova group:core from:now-3weeks author:self
`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(tc.config)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := c.TokenVariables(); !reflect.DeepEqual(got, tc.tokens) && (len(got) != 0 || len(tc.tokens) != 0) {
				t.Errorf("TokenVariables() = %v, want %v", got, tc.tokens)
			}
		})
	}
}

// alias returns a config of two workspaces whose second has a good alias "a" and the alias
// "b" given; the first workspace has the group ops, the second the project nova and group core.
func alias(query string) string {
	return fmt.Sprintf(`workspaces:
  - {name: w1, crawlers: [], idents: [{ident: Joe, aliases: [], groups: [ops]}]}
  - name: w2
    crawlers: []
    projects: [{name: nova}]
    idents: [{ident: Jane, aliases: [], groups: [core]}]
    search_aliases:
      - {name: a, alias: "state:open"}
      - {name: b, alias: %q}
`, query)
}

func TestParseRejects(t *testing.T) {
	crawler := func(provider string) string {
		return "workspaces:\n  - name: w\n    crawlers:\n      - name: c\n        update_since: \"2020-01-01\"\n        provider: " + provider + "\n"
	}
	// crawlers returns a config whose top-level crawlers section is section.
	crawlers := func(section string) string { return "crawlers: " + section + "\nworkspaces: [{name: a, crawlers: []}]" }
	tests := map[string]struct {
		config string
		path   string
		reason Reason
		// message holds a part of the message.
		message string
	}{
		"too large":          {config: "workspaces: []\n" + strings.Repeat("#", MaxSize), reason: ReasonTooLarge, message: "more than the 1048576 allowed"},
		"not YAML":           {config: "workspaces: [\n", reason: ReasonSyntax, message: "not valid YAML"},
		"tab indentation":    {config: "workspaces:\n\t- name: a", reason: ReasonSyntax, message: "not valid YAML"},
		"empty":              {config: "", reason: ReasonSyntax, message: "empty"},
		"only a comment":     {config: "# nothing\n", reason: ReasonSyntax, message: "empty"},
		"a list":             {config: "- name: demo", reason: ReasonSyntax, message: "must be a mapping with a workspaces list, not a list"},
		"a string":           {config: "hello", reason: ReasonSyntax, message: "not a string"},
		"no workspaces":      {config: "about: {links: []}", path: "workspaces", reason: ReasonMissing, message: "is required"},
		"null workspaces":    {config: "workspaces:", path: "workspaces", reason: ReasonMissing},
		"empty workspaces":   {config: "workspaces: []", path: "workspaces", reason: ReasonInvalid, message: "at least one"},
		"workspaces a map":   {config: "workspaces: {name: a}", path: "workspaces", reason: ReasonWrongType, message: "must be a list, not a mapping"},
		"workspace string":   {config: "workspaces: [demo]", path: "workspaces[0]", reason: ReasonWrongType, message: "must be a mapping, not a string"},
		"no name":            {config: "workspaces: [{crawlers: []}]", path: "workspaces[0].name", reason: ReasonMissing},
		"numeric name":       {config: "workspaces: [{name: 42, crawlers: []}]", path: "workspaces[0].name", reason: ReasonWrongType, message: "must be a string, not a number"},
		"empty name":         {config: "workspaces: [{name: '', crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: "it is empty"},
		"uppercase name":     {config: "workspaces: [{name: a, crawlers: []}, {name: Bad Name, crawlers: []}]", path: "workspaces[1].name", reason: ReasonInvalid, message: `"Bad Name" is not a valid workspace name: it contains letters that are not lowercase`},
		"caseless letter":    {config: "workspaces: [{name: 中文, crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: "not lowercase"},
		"space in name":      {config: "workspaces: [{name: bad name, crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: "space"},
		"slash in name":      {config: "workspaces: [{name: ../etc, crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: `\ / *`},
		"colon in name":      {config: "workspaces: [{name: 'a:b', crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid},
		"dot name":           {config: "workspaces: [{name: '.', crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: `"." or ".."`},
		"dotdot name":        {config: "workspaces: [{name: '..', crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: `"." or ".."`},
		"leading dash":       {config: "workspaces: [{name: -a, crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: "starts with"},
		"leading underscore": {config: "workspaces: [{name: _a, crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: "starts with"},
		"256 bytes":          {config: "workspaces: [{name: " + strings.Repeat("a", 256) + ", crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: "longer than 255 bytes"},
		"238 bytes":          {config: "workspaces: [{name: " + strings.Repeat("a", MaxWorkspaceNameBytes+1) + ", crawlers: []}]", path: "workspaces[0].name", reason: ReasonInvalid, message: "longer than 237 bytes"},
		"duplicate workspace": {config: "workspaces: [{name: a, crawlers: []}, {name: b, crawlers: []}, {name: a, crawlers: []}]",
			path: "workspaces[2].name", reason: ReasonDuplicate, message: "workspaces[0]"},
		"no crawlers key": {config: "workspaces: [{name: a}]", path: "workspaces[0].crawlers", reason: ReasonMissing, message: "crawlers: []"},
		"crawlers a map":  {config: "workspaces: [{name: a, crawlers: {name: x}}]", path: "workspaces[0].crawlers", reason: ReasonWrongType},
		"crawler without name": {config: "workspaces: [{name: a, crawlers: [{update_since: '2020-01-01', provider: TaskDataProvider}]}]",
			path: "workspaces[0].crawlers[0].name", reason: ReasonMissing},
		"crawler with empty name": {config: "workspaces: [{name: a, crawlers: [{name: '', update_since: '2020-01-01', provider: TaskDataProvider}]}]",
			path: "workspaces[0].crawlers[0].name", reason: ReasonInvalid},
		"duplicate crawler": {config: "workspaces: [{name: a, crawlers: [{name: x, update_since: '2020-01-01', provider: TaskDataProvider}, {name: x, update_since: '2020-01-01', provider: TaskDataProvider}]}]",
			path: "workspaces[0].crawlers[1].name", reason: ReasonDuplicate, message: "crawlers[0]"},
		"no update_since": {config: "workspaces: [{name: a, crawlers: [{name: x, provider: TaskDataProvider}]}]",
			path: "workspaces[0].crawlers[0].update_since", reason: ReasonMissing},
		"bad update_since": {config: "workspaces: [{name: a, crawlers: [{name: x, update_since: yesterday, provider: TaskDataProvider}]}]",
			path: "workspaces[0].crawlers[0].update_since", reason: ReasonInvalid, message: "YYYY-MM-DD"},
		"no provider": {config: "workspaces: [{name: a, crawlers: [{name: x, update_since: '2020-01-01'}]}]",
			path: "workspaces[0].crawlers[0].provider", reason: ReasonMissing},
		"unknown provider string": {config: crawler("jira"), path: "workspaces[0].crawlers[0].provider", reason: ReasonUnknownProvider, message: `"jira" is not a provider`},
		"unknown provider map":    {config: crawler("{jira_url: https://x}"), path: "workspaces[0].crawlers[0].provider", reason: ReasonUnknownProvider, message: "matches no Monocle provider"},
		"provider a list":         {config: crawler("[github]"), path: "workspaces[0].crawlers[0].provider", reason: ReasonWrongType},
		"github organization a number": {config: crawler("{github_organization: 42}"),
			path: "workspaces[0].crawlers[0].provider.github_organization", reason: ReasonWrongType},
		"github token a number": {config: crawler("{github_organization: o, github_token: 42}"),
			path: "workspaces[0].crawlers[0].provider.github_token", reason: ReasonWrongType},
		"gitlab without organization": {config: crawler("{gitlab_url: https://gitlab.com, gitlab_token: GL}"),
			path: "workspaces[0].crawlers[0].provider.gitlab_organization", reason: ReasonMissing},
		"github_users not a list": {config: crawler("{github_users: jane}"),
			path: "workspaces[0].crawlers[0].provider.github_users", reason: ReasonWrongType},
		"token is a token": {config: crawler("{github_organization: o, github_token: ghp_0123456789abcdefghijklmnopqrstuvwxyzAB}"),
			path: "workspaces[0].crawlers[0].provider.github_token", reason: ReasonInvalid, message: "looks like a token"},
		"token name with a dash": {config: crawler("{gitlab_organization: o, gitlab_token: my-token}"),
			path: "workspaces[0].crawlers[0].provider.gitlab_token", reason: ReasonInvalid, message: "not an environment variable name"},
		"empty token name": {config: crawler("{bugzilla_url: u, bugzilla_token: ''}"),
			path: "workspaces[0].crawlers[0].provider.bugzilla_token", reason: ReasonInvalid, message: "empty"},
		"bad crawlers_api_key": {config: "workspaces: [{name: a, crawlers_api_key: 'x y', crawlers: []}]",
			path: "workspaces[0].crawlers_api_key", reason: ReasonInvalid},
		"ident without aliases": {config: "workspaces: [{name: a, crawlers: [], idents: [{ident: x}]}]",
			path: "workspaces[0].idents[0].aliases", reason: ReasonMissing},
		"ident groups a string": {config: "workspaces: [{name: a, crawlers: [], idents: [{ident: x, aliases: [], groups: core}]}]",
			path: "workspaces[0].idents[0].groups", reason: ReasonWrongType},
		"project without name": {config: "workspaces: [{name: a, crawlers: [], projects: [{repository_regex: x}]}]",
			path: "workspaces[0].projects[0].name", reason: ReasonMissing},
		"search alias without alias": {config: "workspaces: [{name: a, crawlers: [], search_aliases: [{name: x}]}]",
			path: "workspaces[0].search_aliases[0].alias", reason: ReasonMissing},
		// The aliases Monocle's API stops on (loadAliases), with Monocle's messages.
		"alias with a bad date": {config: alias("from:hier"), path: "workspaces[1].search_aliases[1].alias", reason: ReasonInvalid,
			message: `search alias "b" is not a query Monocle runs, and its API would not start ("Invalid aliases"): Invalid date: hier, at character 0 of "from:hier"`},
		"alias with a year of leading zeros before 1970": {config: alias("from:0000001969"), path: "workspaces[1].search_aliases[1].alias", reason: ReasonInvalid,
			message: "Date is too old: 1969-01-01 00:00:00 UTC, at character 0"},
		"alias with an unknown field": {config: alias("bad:cofee"), path: "workspaces[1].search_aliases[1].alias", reason: ReasonInvalid,
			message: "Unknown field: bad, at character 0"},
		"alias with a space after the operator": {config: alias("a: b"), path: "workspaces[1].search_aliases[1].alias", reason: ReasonInvalid,
			message: "Expected field value (spaces are not allowed after operator), at character 2"},
		"alias with an unclosed paren": {config: alias("(state:open"), path: "workspaces[1].search_aliases[1].alias", reason: ReasonInvalid,
			message: "Expected closing paren `)`, at character 11"},
		"empty alias": {config: alias(""), path: "workspaces[1].search_aliases[1].alias", reason: ReasonInvalid, message: "Empty alias"},
		"alias of an unknown project": {config: alias("project:swift"), path: "workspaces[1].search_aliases[1].alias", reason: ReasonInvalid,
			message: "Unknown project: swift"},
		"alias of another workspace's group": {config: alias("group:ops"), path: "workspaces[1].search_aliases[1].alias", reason: ReasonInvalid,
			message: "Unknown group: ops"},
		"about without links":   {config: "about: {}\nworkspaces: [{name: a, crawlers: []}]", path: "about.links", reason: ReasonMissing},
		"negative loop delay":   {config: "crawlers: {loop_delay_sec: -1}\nworkspaces: [{name: a, crawlers: []}]", path: "crawlers.loop_delay_sec", reason: ReasonInvalid},
		"fractional loop delay": {config: "crawlers: {loop_delay_sec: 1.5}\nworkspaces: [{name: a, crawlers: []}]", path: "crawlers.loop_delay_sec", reason: ReasonInvalid},
		"auth without provider": {config: "auth: {enforce_auth: true}\nworkspaces: [{name: a, crawlers: []}]", path: "auth.auth_provider", reason: ReasonMissing},
		"enforce_auth a string": {config: "auth: {enforce_auth: 'yes'}\nworkspaces: [{name: a, crawlers: []}]", path: "auth.enforce_auth", reason: ReasonWrongType},
		"github auth": {config: "auth: {auth_provider: {github_oauth_name: gh, github_oauth_client_id: id}}\nworkspaces: [{name: a, crawlers: []}]",
			path: "auth.auth_provider", reason: ReasonUnsupported},
		"oidc without issuer": {config: "auth: {auth_provider: {oidc_provider_name: kc, oidc_client_id: id}}\nworkspaces: [{name: a, crawlers: []}]",
			path: "auth.auth_provider.oidc_issuer_url", reason: ReasonMissing},
		"two documents":   {config: "workspaces: [{name: a, crawlers: []}]\n---\nworkspaces: []", reason: ReasonSyntax, message: "more than one YAML document"},
		"duplicate key":   {config: "workspaces: [{name: a, crawlers: []}]\nworkspaces: [{name: b, crawlers: []}]", reason: ReasonSyntax, message: `"workspaces" twice`},
		"complex key":     {config: "? [a]\n: b\nworkspaces: [{name: a, crawlers: []}]", reason: ReasonSyntax, message: "not a string"},
		"YAML 1.2 true":   {config: "workspaces: [{name: true, crawlers: []}]", path: "workspaces[0].name", reason: ReasonWrongType, message: "not a boolean"},
		"recursive alias": {config: "a: &a [*a]\nworkspaces: [{name: a, crawlers: []}]", reason: ReasonSyntax, message: "alias"},
		"billion laughs":  {config: laughs, reason: ReasonSyntax},
		// Lists that are no {key, value} list where a record is expected are a Mismatch for
		// dhall-json; a key given twice is refused, where dhall-json keeps its last value.
		"key-value item without a value":           {config: crawlers("[{key: loop_delay_sec}]"), path: "crawlers", reason: ReasonWrongType, message: "item 0 is not"},
		"key-value item with a number key":         {config: crawlers("[{key: 1, value: 2}]"), path: "crawlers", reason: ReasonWrongType},
		"mapKey and mapValue, for Dhall maps only": {config: crawlers("[{mapKey: loop_delay_sec, mapValue: 1}]"), path: "crawlers", reason: ReasonWrongType},
		"key-value key given twice": {config: crawlers("[{key: loop_delay_sec, value: 1}, {key: loop_delay_sec, value: 2}]"),
			path: "crawlers[1]", reason: ReasonDuplicate, message: `"loop_delay_sec" again`},
		"field of a record read from a key-value list": {config: crawlers("[{key: loop_delay_sec, value: -1}]"), path: "crawlers.loop_delay_sec", reason: ReasonInvalid},
		"empty list for a record with a required list": {config: "about: []\nworkspaces: [{name: a, crawlers: []}]", path: "about.links", reason: ReasonMissing},
		"empty list for a provider":                    {config: crawler("[]"), path: "workspaces[0].crawlers[0].provider", reason: ReasonUnknownProvider},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(tc.config)
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", c)
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v is a %T, want *Error", err, err)
			}
			if perr.Path != tc.path || perr.Reason != tc.reason || !strings.Contains(perr.Message, tc.message) {
				t.Errorf("got path %q reason %s message %q; want path %q reason %s message containing %q",
					perr.Path, perr.Reason, perr.Message, tc.path, tc.reason, tc.message)
			}
			if tc.path != "" && !strings.HasPrefix(err.Error(), tc.path+": ") {
				t.Errorf("Error() = %q does not start with the path", err.Error())
			}
			if len(err.Error()) > 1024 {
				t.Errorf("message of %d bytes: %.100s...", len(err.Error()), err.Error())
			}
		})
	}
}

// laughs is a YAML alias bomb; the YAML decoder refuses its expansion.
const laughs = `
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
workspaces: [{name: a, crawlers: []}]
`

func TestErrorsDoNotEchoTokens(t *testing.T) {
	const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	_, err := Parse("workspaces: [{name: a, crawlers: [{name: c, update_since: '2020-01-01', provider: {github_organization: o, github_token: " + token + "}}]}]")
	if err == nil || strings.Contains(err.Error(), token) || strings.Contains(err.Error(), token[:12]) {
		t.Errorf("error %v repeats the token", err)
	}
}

func TestErrorsQuoteAtMostAFewCharacters(t *testing.T) {
	name := strings.Repeat("X", 200)
	_, err := Parse("workspaces: [{name: " + name + ", crawlers: []}]")
	if err == nil || strings.Contains(err.Error(), name[:maxQuoted+1]) || !strings.Contains(err.Error(), name[:maxQuoted]+`"...`) {
		t.Errorf("error %v does not cut the quoted name", err)
	}
}

func TestValidateWorkspaceName(t *testing.T) {
	// Monocle's own examples, from the doctests of mkIndexName in src/Monocle/Config.hs.
	for name, ok := range map[string]bool{
		"":                       false,
		strings.Repeat("x", 256): false,
		"azerTY":                 false,
		"hello#world":            false,
		"-test":                  false,
		".":                      false,
		"..":                     false,
		"hello-world_42":         true,
		"a.b":                    true,
		"42":                     true,
		"über":                   true,
		"Über":                   false,
		"a\tb":                   true, // Monocle checks no other character.
		strings.Repeat("é", 118): true, // 236 bytes
		strings.Repeat("é", 119): false,
	} {
		if err := ValidateWorkspaceName(name); (err == nil) != ok {
			t.Errorf("ValidateWorkspaceName(%.20q) = %v, want ok=%v", name, err, ok)
		}
	}
}
