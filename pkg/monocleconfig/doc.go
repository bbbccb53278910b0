// Package monocleconfig parses and validates Monocle's config.yaml the way Monocle 1.11.2
// loads it, so the operator can refuse a config before a pod crash-loops on it and can tell
// which environment variables the crawlers read their tokens from.
//
// Monocle loads config.yaml with Dhall's yaml-to-dhall against the schema in
// schemas/monocle/config/ (Config/Type.dhall, Workspace/Type.dhall, Crawler/Type.dhall,
// Crawler/Provider.dhall and Provider/*/Type.dhall at tag 1.11.2), using dhall-json's default
// conversion (src/Monocle/Config.hs, loadConfigWithoutEnv). That conversion:
//   - ignores keys the schema does not know (strictRecs = False), at any level;
//   - requires every key whose type is not Optional, lists included (omissibleLists = False):
//     a workspace without "crawlers" is refused, "crawlers: []" is the empty form;
//   - takes Text only from YAML strings (name: 42 is refused), Natural only from
//     non-negative numbers without a fraction, of any size;
//   - reads a list of {key, value} mappings as a mapping wherever a record is expected, the
//     empty list as the empty mapping (crawlers: [] at the top sets no crawler setting);
//   - decides a crawler's provider by shape, trying the alternatives of Provider.dhall in
//     alphabetical order (Dhall normalisation sorts union alternatives) and keeping the first
//     that fits: Bugzilla, Gerrit, GithubApplication, Github, GithubUser, Gitlab, TaskData.
//
// Parse adds rules Monocle does not check when loading but fails on later, or that protect
// the index data; each is documented where it is enforced. One rule is stricter than Monocle
// on purpose: a key given twice, in a mapping or in a {key, value} list, is refused, where
// Monocle's YAML reader and dhall-json keep the last value silently.
package monocleconfig
