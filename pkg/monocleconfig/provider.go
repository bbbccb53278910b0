package monocleconfig

import (
	"fmt"
)

// Provider names, the values of Crawler.Provider. Each stands for one alternative of
// Monocle's schemas/monocle/config/Crawler/Provider.dhall (1.11.2).
const (
	// ProviderBugzilla crawls a Bugzilla: provider key bugzilla_url. Token variable:
	// bugzilla_token, default BUGZILLA_TOKEN.
	ProviderBugzilla = "bugzilla"
	// ProviderGerrit crawls a Gerrit: provider key gerrit_url. It reads a password only when
	// gerrit_login is set: gerrit_password, default GERRIT_PASSWORD.
	ProviderGerrit = "gerrit"
	// ProviderGitHubApplication is a GitHub App crawler: provider keys github_app_id and
	// github_app_key_path. Monocle 1.11.2 loads it but does not run it ("Not (yet)
	// implemented" in src/Macroscope/Main.hs); it reads no token.
	ProviderGitHubApplication = "github-application"
	// ProviderGitHub crawls a GitHub organization: provider key github_organization. Token
	// variable: github_token, default GITHUB_TOKEN.
	ProviderGitHub = "github"
	// ProviderGitHubUser crawls the pull requests of GitHub users: provider key github_users.
	// Token variable: github_token, default GITHUB_TOKEN.
	ProviderGitHubUser = "github-user"
	// ProviderGitLab crawls a GitLab group: provider key gitlab_organization. Token variable:
	// gitlab_token, default GITLAB_TOKEN.
	ProviderGitLab = "gitlab"
	// ProviderTaskData is written `provider: TaskDataProvider`: an external tool pushes task
	// data through the API; the crawler runs nothing for it and reads no token.
	ProviderTaskData = "taskdata"
)

// Default token variables of the providers, from the getSecret calls in getCrawler
// (src/Macroscope/Main.hs, 1.11.2).
const (
	DefaultGitHubTokenVariable    = "GITHUB_TOKEN"
	DefaultGitLabTokenVariable    = "GITLAB_TOKEN"
	DefaultGerritPasswordVariable = "GERRIT_PASSWORD"
	DefaultBugzillaTokenVariable  = "BUGZILLA_TOKEN"
)

// providerShape is one alternative of Provider.dhall: the keys that identify it and how to
// check a mapping against it.
type providerShape struct {
	name string
	// keys are the keys of the alternative; they pick the alternative to blame when a
	// mapping fits none.
	keys []string
	// check returns the key holding the token variable name ("" when none is read) and the
	// default variable, or why o does not fit.
	check func(o object) (tokenKey, defaultVar string, err *Error)
}

// providerShapes are in the order Monocle tries them: alphabetical by Dhall constructor name.
var providerShapes = []providerShape{
	{ProviderBugzilla, []string{"bugzilla_url", "bugzilla_token", "bugzilla_products"}, func(o object) (string, string, *Error) {
		return "bugzilla_token", DefaultBugzillaTokenVariable, firstError(
			textErr(o.text("bugzilla_url")), optTextErr(o.optText("bugzilla_token")), listErr(o.textList("bugzilla_products", true)))
	}},
	{ProviderGerrit, []string{"gerrit_url", "gerrit_login", "gerrit_password", "gerrit_prefix", "gerrit_repositories"}, func(o object) (string, string, *Error) {
		err := firstError(textErr(o.text("gerrit_url")), optTextErr(o.optText("gerrit_login")),
			optTextErr(o.optText("gerrit_password")), optTextErr(o.optText("gerrit_prefix")),
			listErr(o.textList("gerrit_repositories", true)))
		if !o.has("gerrit_login") {
			return "", "", err
		}
		return "gerrit_password", DefaultGerritPasswordVariable, err
	}},
	{ProviderGitHubApplication, []string{"github_app_url", "github_app_id", "github_app_key_path", "github_app_organization", "github_app_repositories"}, func(o object) (string, string, *Error) {
		return "", "", firstError(optTextErr(o.optText("github_app_url")), textErr(o.text("github_app_id")),
			textErr(o.text("github_app_key_path")), optTextErr(o.optText("github_app_organization")),
			listErr(o.textList("github_app_repositories", true)))
	}},
	{ProviderGitHub, []string{"github_url", "github_token", "github_organization", "github_repositories"}, func(o object) (string, string, *Error) {
		return "github_token", DefaultGitHubTokenVariable, firstError(optTextErr(o.optText("github_url")),
			optTextErr(o.optText("github_token")), textErr(o.text("github_organization")),
			listErr(o.textList("github_repositories", true)))
	}},
	{ProviderGitHubUser, []string{"github_url", "github_token", "github_users"}, func(o object) (string, string, *Error) {
		return "github_token", DefaultGitHubTokenVariable, firstError(optTextErr(o.optText("github_url")),
			optTextErr(o.optText("github_token")), listErr(o.textList("github_users", false)))
	}},
	{ProviderGitLab, []string{"gitlab_url", "gitlab_token", "gitlab_organization", "gitlab_repositories"}, func(o object) (string, string, *Error) {
		return "gitlab_token", DefaultGitLabTokenVariable, firstError(optTextErr(o.optText("gitlab_url")),
			optTextErr(o.optText("gitlab_token")), textErr(o.text("gitlab_organization")),
			listErr(o.textList("gitlab_repositories", true)))
	}},
}

func firstError(errs ...*Error) *Error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func textErr(_ string, err *Error) *Error            { return err }
func optTextErr(_ string, _ bool, err *Error) *Error { return err }
func listErr(_ []string, err *Error) *Error          { return err }

// taskDataProvider is how config.yaml selects the TaskData alternative, which has no fields:
// yaml-to-dhall takes a string equal to the constructor name.
const taskDataProvider = "TaskDataProvider"

// parseProvider decides the provider of a crawler from the value of its provider key, the
// way yaml-to-dhall does, and returns the provider name, its token variable ("" when it
// reads none) and the entities it names.
func parseProvider(path string, v any) (provider, tokenVariable string, _ Entities, _ *Error) {
	if s, ok := v.(string); ok {
		if s == taskDataProvider {
			return ProviderTaskData, "", Entities{}, nil
		}
		return "", "", Entities{}, newError(path, ReasonUnknownProvider, fmt.Sprintf("%s is not a provider: write a mapping of provider keys (%s), or %s", quote(s), providerKeysHint, taskDataProvider))
	}
	o, err := asObject(path, v)
	if err != nil {
		return "", "", Entities{}, err
	}
	var blame *Error
	blameScore := 0
	for _, shape := range providerShapes {
		tokenKey, defaultVar, err := shape.check(o)
		if err == nil {
			tokenVariable, err := tokenVariableOf(o, tokenKey, defaultVar)
			return shape.name, tokenVariable, providerEntities(shape.name, o), err
		}
		// When nothing fits, report the mismatch of the alternative the user most likely
		// meant: the one with the most keys present.
		if score := countKeys(o, shape.keys); score > blameScore {
			blame, blameScore = err, score
		}
	}
	if blame != nil {
		return "", "", Entities{}, blame
	}
	return "", "", Entities{}, newError(path, ReasonUnknownProvider, fmt.Sprintf("matches no Monocle provider: it needs one of %s, or be the string %s", providerKeysHint, taskDataProvider))
}

const providerKeysHint = "github_organization, github_users, gitlab_organization, gerrit_url, bugzilla_url, github_app_id with github_app_key_path"

func countKeys(o object, keys []string) int {
	n := 0
	for _, k := range keys {
		if _, ok := o.m[k]; ok {
			n++
		}
	}
	return n
}

// tokenVariableOf returns the variable the provider reads its token from: the value of
// tokenKey, else defaultVar; "" when tokenKey is "" (no token read).
func tokenVariableOf(o object, tokenKey, defaultVar string) (string, *Error) {
	if tokenKey == "" {
		return "", nil
	}
	name, set, _ := o.optText(tokenKey)
	if !set {
		return defaultVar, nil
	}
	if err := validateVariableName(name); err != nil {
		// The value is not quoted: it may be a token.
		return "", newError(keyPath(o.path, tokenKey), ReasonInvalid, err.Error())
	}
	return name, nil
}
