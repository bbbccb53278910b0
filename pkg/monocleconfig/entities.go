package monocleconfig

import (
	"regexp"
	"strings"
)

// Entity types: the crawler_type of Monocle's crawler metadata documents (entityTypeName in
// src/Monocle/Entity.hs at 1.11.2). A GitHub repository's issues (ProjectIssue) are kept as
// taskdata: they share the document of the repository's task data.
const (
	EntityOrganization = "organization"
	EntityProject      = "project"
	EntityTaskData     = "taskdata"
	EntityUser         = "user"
)

// Entities are the provider keys of a crawler that name what it crawls.
type Entities struct {
	// Organization is github_organization or gitlab_organization; "" for other providers.
	Organization string
	// Repositories are github_repositories, gitlab_repositories or gerrit_repositories (for
	// Gerrit, project names and regexes that start with "^"); RepositoriesSet says whether
	// the key is set, which changes what the crawler does even for an empty list.
	Repositories    []string
	RepositoriesSet bool
	// Products are bugzilla_products; Users are github_users.
	Products, Users []string
}

// providerEntities reads the Entities of a provider mapping o that fits provider (its keys
// are checked already).
func providerEntities(provider string, o object) Entities {
	var e Entities
	repos := ""
	switch provider {
	case ProviderGitHub, ProviderGitLab:
		e.Organization, _, _ = o.optText(provider + "_organization")
		repos = provider + "_repositories"
	case ProviderGerrit:
		repos = "gerrit_repositories"
	case ProviderBugzilla:
		e.Products, _ = o.textList("bugzilla_products", true)
	case ProviderGitHubUser:
		e.Users, _ = o.textList("github_users", true)
	}
	if repos != "" && o.has(repos) {
		e.Repositories, _ = o.textList(repos, true)
		e.RepositoriesSet = true
	}
	return e
}

// EntityFilter says which crawler metadata documents of a crawler the crawler moves under a
// config: those of the entities it crawls and commits. The zero EntityFilter holds none.
type EntityFilter struct {
	exact map[[2]string]bool
	// orgPrefix is "<organization>/" when the crawler lists the organization's projects
	// itself: every project under it is crawled. Compared without case: GitHub and GitLab
	// name owners and groups without case, and report them with their own.
	orgPrefix string
	// patterns are the Gerrit regexes whose matching projects the crawler lists; anyProject
	// is set when one of them is not a regex Go reads, and then every project counts.
	patterns   []*regexp.Regexp
	anyProject bool
}

// Has reports whether the document of entity value of type typ (an Entity* constant) is one
// the crawler moves.
func (f EntityFilter) Has(typ, value string) bool {
	if f.exact[[2]string{typ, value}] {
		return true
	}
	if typ != EntityProject {
		return false
	}
	if f.anyProject || (f.orgPrefix != "" && len(value) > len(f.orgPrefix) && strings.EqualFold(value[:len(f.orgPrefix)], f.orgPrefix)) {
		return true
	}
	for _, re := range f.patterns {
		if re.MatchString(value) {
			return true
		}
	}
	return false
}

// EntityFilter returns the filter of the crawler metadata documents crawler c commits when
// Monocle 1.11.2 runs it with this config.
//
// Monocle creates a document for each entity getCrawlerEntities names (src/Monocle/Backend/
// Index.hs, from getCrawlerProject, getCrawlerOrganization, getCrawlerTaskData,
// getCrawlerProjectIssue and getCrawlerUser in src/Monocle/Config.hs), and one for each
// project an organization crawl finds (addProjects in src/Monocle/Api/Server.hs), and never
// deletes one. The crawler moves a document's last_commit_at only through the streams
// getCrawler starts for the provider (src/Macroscope/Main.hs), one per entity type
// (streamEntity in src/Macroscope/Worker.hs):
//   - GitHub without github_repositories: the organization (Projects stream), and the
//     projects it finds, named "<owner>/<repo>" (nameWithOwner, src/Lentille/GitHub/
//     Organization.hs). With github_repositories: the projects and their task data
//     "<organization>/<repo>" (getPath in src/Monocle/Prelude.hs drops the organization's
//     trailing "/"), and not the organization, whose document Monocle still creates but
//     whose stream does not run.
//   - GitLab: the same, without task data; a group's projects are its fullPath, subgroups
//     included (src/Lentille/GitLab/Group.hs).
//   - Gerrit: only with gerrit_repositories; each name is a project, each regex (starting
//     with "^") an organization whose projects the crawler lists from Gerrit
//     (getProjectsStream in src/Lentille/Gerrit.hs), by Gerrit's own names (gerrit_prefix
//     changes only the changes' repository names). Gerrit matches the regex against the
//     whole name ("Boundary matchers '^' and '$' are implicit", Gerrit REST API, List
//     Projects, option r); it is read here as a Go regexp matched against the whole name,
//     and one Go does not read counts every project.
//   - Bugzilla: the task data of each bugzilla_products entry; GitHub users: each user.
//   - TaskData and GitHub App crawlers: none (the crawler runs nothing for them).
//
// Documents of an entity the config no longer names are left out, whether or not the
// crawler still reaches them (Monocle's /crawler/get_commit_info picks the oldest document of
// a type, named or not: getLastUpdated in src/Monocle/Backend/Index.hs): a crawler that hangs
// on one of them stops every entity of the type, the named ones included.
func (c Crawler) EntityFilter() EntityFilter {
	f := EntityFilter{exact: map[[2]string]bool{}}
	e := c.Entities
	switch c.Provider {
	case ProviderGitHub, ProviderGitLab:
		org := strings.TrimRight(e.Organization, "/")
		if !e.RepositoriesSet {
			f.exact[[2]string{EntityOrganization, e.Organization}] = true
			f.orgPrefix = org + "/"
		}
		for _, r := range e.Repositories {
			f.exact[[2]string{EntityProject, org + "/" + r}] = true
			if c.Provider == ProviderGitHub {
				f.exact[[2]string{EntityTaskData, org + "/" + r}] = true
			}
		}
	case ProviderGerrit:
		for _, r := range e.Repositories {
			if !strings.HasPrefix(r, "^") {
				f.exact[[2]string{EntityProject, r}] = true
				continue
			}
			f.exact[[2]string{EntityOrganization, r}] = true
			if re, err := regexp.Compile("^(?:" + r + ")$"); err == nil {
				f.patterns = append(f.patterns, re)
			} else {
				f.anyProject = true
			}
		}
	case ProviderBugzilla:
		for _, p := range e.Products {
			f.exact[[2]string{EntityTaskData, p}] = true
		}
	case ProviderGitHubUser:
		for _, u := range e.Users {
			f.exact[[2]string{EntityUser, u}] = true
		}
	}
	return f
}
