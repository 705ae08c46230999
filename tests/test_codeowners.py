"""CODEOWNERS: parsing, GitHub's matching rules, gpufleet's block and the ownership check."""

from __future__ import annotations

import pytest

from compiler.codeowners import (
    BEGIN,
    END,
    Disagreement,
    Rule,
    disagreements,
    managed_block,
    owners_of,
    parse,
    with_block,
)

TEAM_FILE = "policies/teams/ml-research.yaml"


def owners(text: str, path: str) -> tuple[str, ...] | None:
    rule = owners_of(parse(text), path)
    return None if rule is None else rule.owners


def test_the_last_matching_rule_wins() -> None:
    text = "* @everyone\n*.yaml @yaml\n/policies/ @platform\n"
    assert owners(text, TEAM_FILE) == ("@platform",)
    assert owners(text, "charts/values.yaml") == ("@yaml",)
    assert owners(text, "README.md") == ("@everyone",)
    reordered = "/policies/ @platform\n*.yaml @yaml\n"
    assert owners(reordered, TEAM_FILE) == ("@yaml",)


def test_a_rule_without_owners_leaves_its_paths_unowned() -> None:
    rules = parse("/apps/ @octocat\n/apps/github\n")
    unowned = owners_of(rules, "apps/github/index.js")
    assert unowned == Rule("/apps/github", (), 2)
    assert owners_of(rules, "apps/main/index.js") == Rule("/apps/", ("@octocat",), 1)
    assert owners_of(rules, "README.md") is None


def test_a_leading_slash_anchors_to_the_root_and_a_bare_name_matches_at_any_depth() -> None:
    assert owners("/config @root\n", "config") == ("@root",)
    assert owners("/config @root\n", "deploy/config") is None
    assert owners("config @any\n", "deploy/config") == ("@any",)
    assert owners("config @any\n", "deploy/config.yaml") is None
    # A slash inside the pattern anchors it too, as in gitignore.
    assert owners("policies/teams @t\n", TEAM_FILE) == ("@t",)
    assert owners("policies/teams @t\n", "vendor/policies/teams/x.yaml") is None


def test_a_directory_pattern_owns_everything_under_it_but_not_a_file_of_that_name() -> None:
    text = "logs/ @logs\n"
    assert owners(text, "logs/today.txt") == ("@logs",)
    assert owners(text, "build/logs/deep/today.txt") == ("@logs",)
    assert owners(text, "logs") is None
    assert owners("/docs/ @docs\n", "sub/docs/a.md") is None


def test_a_trailing_star_matches_only_the_files_directly_in_the_directory() -> None:
    # GitHub: `docs/*` matches docs/getting-started.md, not docs/build-app/troubleshooting.md
    # (unlike gitignore, where it would take the whole build-app directory).
    text = "docs/* @docs\n"
    assert owners(text, "docs/getting-started.md") == ("@docs",)
    assert owners(text, "docs/build-app/troubleshooting.md") is None
    assert owners("/* @root-files\n", "Makefile") == ("@root-files",)
    assert owners("/* @root-files\n", "compiler/cli.py") is None
    assert owners("* @all\n", "compiler/cli.py") == ("@all",)


def test_double_star_spans_any_number_of_directories() -> None:
    assert owners("**/logs @logs\n", "deeply/nested/logs/x") == ("@logs",)
    assert owners("**/logs @logs\n", "logs/x") == ("@logs",)
    text = "/policies/**/*.yaml @yaml\n"
    assert owners(text, "policies/a.yaml") == ("@yaml",)
    assert owners(text, TEAM_FILE) == ("@yaml",)
    assert owners(text, "policies/teams/notes.md") is None
    assert owners(text, "other/policies/a.yaml") is None


def test_comments_sections_and_inline_comments_are_not_rules() -> None:
    text = (
        "# * @commented-out\n"
        "\n"
        "[Documentation] @section-default\n"
        "^[Database][2]\n"
        "  *.md   @docs\t@writers  # inline comment @not-an-owner\n"
        "\\#notes.txt @hash\n"
    )
    assert parse(text) == [
        Rule("*.md", ("@docs", "@writers"), 5),
        Rule("\\#notes.txt", ("@hash",), 6),
    ]
    assert owners(text, "#notes.txt") == ("@hash",)


def test_an_escaped_space_stays_in_the_pattern() -> None:
    assert parse("path\\ with\\ spaces/ @space\n") == [
        Rule("path\\ with\\ spaces/", ("@space",), 1)
    ]
    assert owners("path\\ with\\ spaces/ @space\n", "path with spaces/a") == ("@space",)


def test_negation_and_ranges_are_not_gitignore_features_here() -> None:
    # GitHub documents both as unsupported; they must not negate or match a range.
    assert owners("* @all\n!*.md @none\n", "README.md") == ("@all",)
    assert owners("[ab].txt @range\n", "a.txt") is None


def test_the_block_lists_entries_in_the_given_order_between_the_markers() -> None:
    block = managed_block([("/policies/", ["@org/platform"]), (f"/{TEAM_FILE}", ("@org/ml", "@b"))])
    assert block == f"{BEGIN}\n/policies/ @org/platform\n/{TEAM_FILE} @org/ml @b\n{END}\n"
    assert owners(block, TEAM_FILE) == ("@org/ml", "@b")


@pytest.mark.parametrize(
    "pattern", ["", "a b", "#x", "!x", "[Section]", "^[Section]", "x[ab]", "a\\ b", "a\tb"]
)
def test_the_block_refuses_a_pattern_that_would_read_back_as_something_else(
    pattern: str,
) -> None:
    with pytest.raises(ValueError, match="pattern"):
        managed_block([(pattern, ["@o"])])


def test_the_block_refuses_owners_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="owner"):
        managed_block([("/a", ["@x y"])])
    with pytest.raises(ValueError, match="owner"):
        managed_block([("/a", ["#x"])])
    with pytest.raises(TypeError):
        managed_block([("/a", "@one-string")])


def test_with_block_creates_the_file_with_just_the_block() -> None:
    block = managed_block([("/policies/", ["@p"])])
    assert with_block(None, block) == block
    assert with_block("", block) == block
    assert with_block("\n\n", block) == block


def test_with_block_appends_after_a_blank_line_and_keeps_the_other_lines() -> None:
    existing = "# ours\n*   @everyone \n/policies/ @someone-else\n\n\n"
    block = managed_block([("/policies/", ["@p"])])
    text = with_block(existing, block)
    assert text == "# ours\n*   @everyone \n/policies/ @someone-else\n\n" + block
    assert owners(text, TEAM_FILE) == ("@p",)


def test_with_block_replaces_the_old_block_in_place() -> None:
    old = managed_block([("/policies/", ["@old"])])
    new = managed_block([("/policies/", ["@new"]), (f"/{TEAM_FILE}", ["@ml"])])
    existing = f"* @everyone\n\n{old}\n# kept after\n/src/ @dev\n"
    text = with_block(existing, new)
    assert text == f"* @everyone\n\n{new}\n# kept after\n/src/ @dev\n"
    assert "@old" not in text


def test_with_block_is_idempotent() -> None:
    block = managed_block([("/policies/", ["@p"])])
    for existing in (None, "* @all", "* @all\n\n\n", f"x @y\n{block}z @w\n"):
        once = with_block(existing, block)
        assert with_block(once, block) == once
        assert once.endswith("\n") and not once.endswith("\n\n")


def test_with_block_refuses_a_broken_or_doubled_block() -> None:
    block = managed_block([])
    with pytest.raises(ValueError, match="never closed"):
        with_block(f"{BEGIN}\n/a @b\n", block)
    with pytest.raises(ValueError, match="more than one"):
        with_block(block + block, block)
    with pytest.raises(ValueError, match="BEGIN"):
        with_block("", "/a @b\n")


def test_a_hand_written_line_after_the_block_that_takes_a_team_file_is_a_disagreement() -> None:
    block = managed_block([("/policies/", ["@org/platform"]), (f"/{TEAM_FILE}", ["@org/ml"])])
    text = with_block("* @everyone\n", block) + "/policies/teams/ @org/intruder\n"
    expected = {TEAM_FILE: ["@org/ml"], "policies/fleet.yaml": ["@org/platform"]}
    found = disagreements(text, expected)
    assert found == [
        Disagreement(
            TEAM_FILE,
            ("@org/ml",),
            ("@org/intruder",),
            Rule("/policies/teams/", ("@org/intruder",), 7),
        )
    ]
    assert disagreements(with_block("* @everyone\n", block), expected) == []


def test_different_owners_are_a_disagreement() -> None:
    text = f"/{TEAM_FILE} @org/ml @org/extra\n"
    [found] = disagreements(text, {TEAM_FILE: ["@org/ml"]})
    assert found.actual == ("@org/ml", "@org/extra") and found.rule is not None
    assert found.rule.line == 1


def test_a_path_no_rule_matches_is_a_disagreement_and_results_are_sorted() -> None:
    found = disagreements("/src/ @dev\n", {"policies/b.yaml": ["@p"], "policies/a.yaml": ["@p"]})
    assert [d.path for d in found] == ["policies/a.yaml", "policies/b.yaml"]
    assert all(d.rule is None and d.actual == () for d in found)


def test_owner_names_compare_without_case_and_order() -> None:
    text = f"/{TEAM_FILE} @Org/ML-Team @Alice\n"
    assert disagreements(text, {TEAM_FILE: ["@alice", "@org/ml-team"]}) == []
    assert len(disagreements(text, {TEAM_FILE: ["@alice"]})) == 1


def test_an_expected_unowned_path_agrees_with_an_unowned_rule() -> None:
    text = "* @everyone\n/out/\n"
    assert disagreements(text, {"out/report.md": []}) == []
    assert len(disagreements(text, {"README.md": []})) == 1


def test_paths_must_be_repository_relative() -> None:
    with pytest.raises(ValueError):
        owners_of([], "/policies/fleet.yaml")
    with pytest.raises(TypeError):
        disagreements("", {TEAM_FILE: "@org/ml"})
