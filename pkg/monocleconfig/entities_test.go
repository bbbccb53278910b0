package monocleconfig

import (
	"testing"
)

// TestEntityFilter: which crawler metadata documents (type, value) each provider's config
// makes the crawler commit, from the config text through Parse.
func TestEntityFilter(t *testing.T) {
	type doc struct{ typ, value string }
	tests := map[string]struct {
		provider string
		in, out  []doc
	}{
		"github organization: the organization and the projects under it": {
			provider: "{github_organization: change-metrics}",
			in: []doc{{EntityOrganization, "change-metrics"}, {EntityProject, "change-metrics/monocle"},
				{EntityProject, "Change-Metrics/monocle-operator"}},
			out: []doc{{EntityProject, "other/monocle"}, {EntityProject, "change-metrics"}, {EntityProject, "change-metrics-x/a"},
				{EntityTaskData, "change-metrics/monocle"}, {EntityOrganization, "other"}},
		},
		"github repositories: their projects and task data, not the organization": {
			provider: "{github_organization: change-metrics/, github_repositories: [monocle, operator]}",
			in: []doc{{EntityProject, "change-metrics/monocle"}, {EntityTaskData, "change-metrics/operator"},
				{EntityTaskData, "change-metrics/monocle"}, {EntityProject, "change-metrics/operator"}},
			out: []doc{{EntityOrganization, "change-metrics/"}, {EntityOrganization, "change-metrics"},
				{EntityProject, "change-metrics/dropped"}, {EntityProject, "Change-Metrics/monocle"}},
		},
		"github empty repositories: nothing": {
			provider: "{github_organization: o, github_repositories: []}",
			out:      []doc{{EntityOrganization, "o"}, {EntityProject, "o/a"}},
		},
		"gitlab group: the group and its projects, subgroups included": {
			provider: "{gitlab_organization: redhat}",
			in:       []doc{{EntityOrganization, "redhat"}, {EntityProject, "redhat/sub/project"}},
			out:      []doc{{EntityTaskData, "redhat/a"}, {EntityProject, "other/a"}},
		},
		"gitlab repositories: projects only": {
			provider: "{gitlab_organization: redhat, gitlab_repositories: [a]}",
			in:       []doc{{EntityProject, "redhat/a"}},
			out:      []doc{{EntityTaskData, "redhat/a"}, {EntityOrganization, "redhat"}, {EntityProject, "redhat/b"}},
		},
		"gerrit names and regexes": {
			provider: `{gerrit_url: "https://review.opendev.org", gerrit_prefix: "opendev/", gerrit_repositories: [zuul/zuul, "^openstack/nova.*", "^x/y$"]}`,
			in: []doc{{EntityProject, "zuul/zuul"}, {EntityOrganization, "^openstack/nova.*"}, {EntityProject, "openstack/nova"},
				{EntityProject, "openstack/nova-specs"}, {EntityOrganization, "^x/y$"}, {EntityProject, "x/y"}},
			out: []doc{{EntityProject, "zuul/nodepool"}, {EntityProject, "other/openstack/nova"}, {EntityProject, "opendev/zuul/zuul"},
				{EntityProject, "x/yz"}, {EntityOrganization, "zuul/zuul"}},
		},
		"gerrit regex Go does not read: every project": {
			provider: `{gerrit_url: "https://review.opendev.org", gerrit_repositories: ["^a(b"]}`,
			in:       []doc{{EntityOrganization, "^a(b"}, {EntityProject, "anything"}},
			out:      []doc{{EntityOrganization, "other"}, {EntityTaskData, "anything"}},
		},
		"gerrit without repositories: nothing": {
			provider: `{gerrit_url: "https://review.opendev.org"}`,
			out:      []doc{{EntityProject, "zuul/zuul"}},
		},
		"bugzilla products": {
			provider: `{bugzilla_url: "https://bugzilla.redhat.com", bugzilla_products: [OpenStack]}`,
			in:       []doc{{EntityTaskData, "OpenStack"}},
			out:      []doc{{EntityTaskData, "Fedora"}, {EntityProject, "OpenStack"}},
		},
		"github users": {
			provider: "{github_users: [jane]}",
			in:       []doc{{EntityUser, "jane"}},
			out:      []doc{{EntityUser, "john"}, {EntityProject, "jane"}},
		},
		"task data: nothing": {
			provider: "TaskDataProvider",
			out:      []doc{{EntityTaskData, "x"}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Parse("workspaces:\n  - name: w\n    crawlers:\n      - name: c\n        update_since: \"2024-01-01\"\n        provider: " + tt.provider + "\n")
			if err != nil {
				t.Fatal(err)
			}
			f := c.Workspaces[0].Crawlers[0].EntityFilter()
			for _, d := range tt.in {
				if !f.Has(d.typ, d.value) {
					t.Errorf("Has(%s, %s) = false, want true", d.typ, d.value)
				}
			}
			for _, d := range tt.out {
				if f.Has(d.typ, d.value) {
					t.Errorf("Has(%s, %s) = true, want false", d.typ, d.value)
				}
			}
		})
	}
}
