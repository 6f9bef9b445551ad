"""Pure text transforms of environment.d and ~/.profile: round trips with arbitrary bytes."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rocmpanel.base.errors import PanelError
from rocmpanel.envvars import formats as env_formats
from rocmpanel.envvars import plan as env_plan
from rocmpanel.envvars.plan import EnvChange

NAMES = st.sampled_from(["HSA_OVERRIDE_GFX_VERSION", "MIOPEN_FIND_MODE", "ROCM_PATH", "MY_VAR"])
VALUES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00`"),
    max_size=40,
).filter(lambda v: "$(" not in v)
EXISTING = st.binary(max_size=400).map(lambda b: b.decode("utf-8", "surrogateescape"))


def _clean(text: str, name: str) -> bool:
    return "rocmpanel" not in text and name not in text


@settings(max_examples=150, deadline=None)
@given(existing=EXISTING, name=NAMES, value=VALUES)
def test_environment_d_set_and_unset_keep_other_lines(existing: str, name: str, value: str):
    assume(_clean(existing, name))
    after_set = env_formats.render_environment_d(existing, [(name, value)])
    assert after_set is not None
    assert env_formats.parse_environment_d(after_set)[name] == value
    # Everything that was there is still there, in front, byte for byte.
    assert after_set.startswith(existing)
    after_unset = env_formats.render_environment_d(after_set, [(name, None)])
    assert after_unset is not None and after_unset.startswith(existing)
    assert set(after_unset[len(existing) :]) <= {"\n"} and len(after_unset) - len(existing) <= 2
    assert name not in env_formats.parse_environment_d(after_unset)


@settings(max_examples=150, deadline=None)
@given(existing=EXISTING, name=NAMES, value=VALUES, other=VALUES)
def test_profile_block_round_trip(existing: str, name: str, value: str, other: str):
    assume(_clean(existing, name))
    after_set = env_formats.render_profile(existing, [(name, value), ("OTHER_X", other)])
    assert after_set is not None and after_set.startswith(existing)
    assert env_formats.parse_profile(after_set) == {name: value, "OTHER_X": other}
    again = env_formats.render_profile(after_set, [(name, value + "y")])
    assert again is not None and again.startswith(existing)
    assert env_formats.parse_profile(again)[name] == value + "y"
    removed = env_formats.render_profile(again, [(name, None), ("OTHER_X", None)])
    assert removed is not None and removed.startswith(existing)
    assert set(removed[len(existing) :]) <= {"\n"} and len(removed) - len(existing) <= 2


@settings(max_examples=100, deadline=None)
@given(before=EXISTING, after=EXISTING, name=NAMES, value=VALUES)
def test_profile_block_in_the_middle_keeps_both_sides(before, after, name, value):
    assume(_clean(before, name) and _clean(after, name))
    before = before if before.endswith("\n") or not before else before + "\n"
    text = before + env_formats.render_block({"KEEP_ME": "1"}) + after
    new = env_formats.render_profile(text, [(name, value)])
    assert new is not None and new.startswith(before) and new.endswith(after)
    assert env_formats.parse_profile(new) == {"KEEP_ME": "1", name: value}


def test_environment_d_replaces_in_place_and_drops_duplicates() -> None:
    text = "# mine\nA=1\nROCM_PATH=/old\nB=2\nROCM_PATH=/older\n# end"
    new = env_formats.render_environment_d(text, [("ROCM_PATH", "/opt/rocm-6.4.0")])
    assert new == "# mine\nA=1\nB=2\nROCM_PATH=/opt/rocm-6.4.0\n# end"


def test_environment_d_quotes_what_needs_it() -> None:
    changes = [("X", 'a "b" \\c'), ("P", "/x:$PATH"), ("L", "a$b")]
    text = env_formats.render_environment_d(None, changes, references={"P"})
    assert text is not None and 'X="a \\"b\\" \\\\c"' in text and "P=/x:$PATH\n" in text
    assert "L=a$$b\n" in text  # literal: systemd reads $$ as one $
    assert env_formats.parse_environment_d(text) == {
        "X": 'a "b" \\c',
        "P": "/x:$PATH",
        "L": "a$b",
    }


def test_environment_d_continuation_is_not_joined_to_our_line() -> None:
    new = env_formats.render_environment_d("A=1 \\", [("B", "2")])
    assert new == "A=1 \\\n\nB=2\n"
    assert env_formats.parse_environment_d(new)["B"] == "2"


def test_profile_quoting_keeps_references_and_literals() -> None:
    changes = [("PATH", "/opt/rocm/bin:$PATH"), ("Q", 'say "hi"'), ("L", "it's $HOME")]
    text = env_formats.render_profile("", changes, references={"PATH"})
    assert text is not None
    assert 'export PATH="/opt/rocm/bin:$PATH"\n' in text
    assert "export Q='say \"hi\"'\n" in text
    assert "export L='it'\\''s $HOME'\n" in text
    assert env_formats.parse_profile(text) == {
        "PATH": "/opt/rocm/bin:$PATH",
        "Q": 'say "hi"',
        "L": "it's $HOME",
    }


def test_broken_markers_are_refused() -> None:
    text = f"x\n{env_formats.BLOCK_BEGIN}\nexport A=1\n"
    with pytest.raises(PanelError, match="markers are broken"):
        env_plan.plan_profile("~/.profile", text.encode(), [EnvChange("A", "2")])


def test_unset_of_missing_variable_changes_nothing() -> None:
    plan = env_plan.plan_profile("p", b"keep\n", [EnvChange("A", None)])
    assert not plan.changed and plan.diff == ""
    assert env_plan.plan_environment_d("e", None, [EnvChange("A", None)]).after is None


def test_plan_refuses_invalid_values_and_lists_every_reason() -> None:
    changes = [EnvChange("HSA_OVERRIDE_GFX_VERSION", "11.0"), EnvChange("ROCR_VISIBLE_DEVICES", "")]
    with pytest.raises(PanelError) as info:
        env_plan.plan_environment_d("e", b"", changes)
    assert "'11.0' has 2 parts" in info.value.message
    assert "ROCR_VISIBLE_DEVICES" in info.value.message


def test_plan_diff_shows_the_change() -> None:
    plan = env_plan.plan_environment_d("f.conf", b"A=1\n", [EnvChange("HSA_ENABLE_SDMA", "0")])
    assert "+HSA_ENABLE_SDMA=0" in plan.diff and plan.after == b"A=1\nHSA_ENABLE_SDMA=0\n"


def test_last_change_per_variable_wins() -> None:
    merged = env_plan.merge_changes(
        [EnvChange("A", "1"), EnvChange("B", "2"), EnvChange("A", None)]
    )
    assert merged == (EnvChange("A", None), EnvChange("B", "2"))


def test_path_list_helpers() -> None:
    assert env_plan.with_entry("/a:$PATH", "/b", "linux", first=True) == "/b:/a:$PATH"
    assert env_plan.with_entry("/a", "/a", "linux") == "/a"
    assert env_plan.without_entry("C:\\a;C:\\b;C:\\a", "C:\\a", "windows") == "C:\\b"
    assert env_plan.list_entries("", "linux") == []


@settings(max_examples=100, deadline=None)
@given(before=EXISTING, after=EXISTING, name=NAMES, value=VALUES)
def test_environment_d_replaces_only_the_assignment_line(before, after, name, value):
    assume(_clean(before, name) and _clean(after, name))
    before = before + "\n" if before and not before.endswith("\n") else before
    assume(not before.endswith("\\\n"))
    text = before + f"{name}=old\n" + after
    new = env_formats.render_environment_d(text, [(name, value)])
    assert new == before + f"{name}={env_formats.quote_envd(value)}\n" + after
    removed = env_formats.render_environment_d(text, [(name, None)])
    assert removed == before + after


@pytest.mark.parametrize(
    "value", ["", "/opt/rocm/bin", "$PATH", "${PATH}", "/a:$HOME/b:${LD_LIBRARY_PATH}:$X_1y"]
)
def test_plain_references_are_accepted(value: str) -> None:
    assert env_formats.reference_problem(value) is None


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("/x:${FOO", "'${FOO'"),
        ("${NOPE?boom}", "'${NOPE?boom}'"),
        ("${HOME/o/0}", "'${HOME/o/0}'"),
        ("${HOME:1}", "'${HOME:1}'"),
        ("pid$$", "'$$'"),
        ("$1/bin", "'$1/bin'"),
        ("a$", "'$'"),
        ("$PATH:${A-b}", "'${A-b}'"),
    ],
)
def test_every_other_dollar_is_refused_with_what_it_was(value: str, shown: str) -> None:
    problem = env_formats.reference_problem(value)
    assert problem is not None
    assert problem.startswith(f"{shown} is not a plain variable reference: ")
    assert "written $NAME or ${NAME}" in problem


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("'a'\\''b'", "a'b"),
        ('"a\\$b"', "a$b"),
        ('"$HOME/x"', "$HOME/x"),
        ("'$HOME/x'", "$HOME/x"),
        ("a\\ b", "a b"),
        ("x # comment", "x"),
        ('"a\\\\b\\c"', "a\\b\\c"),
        ("pre'mid'\"post\"", "premidpost"),
    ],
)
def test_sh_words_are_read_as_sh_reads_them(raw: str, value: str) -> None:
    assert env_formats.unquote_sh(raw) == value


def test_profile_lines_not_changed_keep_their_bytes_and_repeats_collapse() -> None:
    block = (
        f"{env_formats.BLOCK_BEGIN}\n"
        "export L='$HOME/x'\n"
        'export M="a\\$b"\n'
        "export A=old\n"
        "# mine\n"
        "export A=older\n"
        f"{env_formats.BLOCK_END}"  # no newline at the end of the file
    )
    new = env_formats.render_profile("x\n" + block, [("A", "new"), ("B", "b$")])
    assert new == (
        f"x\n{env_formats.BLOCK_BEGIN}\n"
        "export L='$HOME/x'\n"
        'export M="a\\$b"\n'
        "# mine\n"
        "export A='new'\n"
        "export B='b$'\n"
        f"{env_formats.BLOCK_END}"
    )
    assert env_formats.parse_profile(new) == {"L": "$HOME/x", "M": "a$b", "A": "new", "B": "b$"}
    gone = env_formats.render_profile(new, [("L", None), ("M", None), ("A", None), ("B", None)])
    assert gone == f"x\n{env_formats.BLOCK_BEGIN}\n# mine\n{env_formats.BLOCK_END}"
