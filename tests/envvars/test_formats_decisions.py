"""Every decision of envvars/formats.py, with exact values (issue 19).

Hand-written files (tests/envvars/data/handwritten/) are parsed to the exact mapping systemd
or sh reads from them, and re-rendered byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.envvars import formats as env_formats
from rocmpanel.envvars.plan import decode, encode

HANDWRITTEN = Path(__file__).parent / "data" / "handwritten"
BEGIN = "# >>> rocmpanel environment >>>"
END = "# <<< rocmpanel environment <<<"
NOTE = (
    "# Managed by rocmpanel (Setup tab or `rocmpanel env`); edits inside this block are replaced."
)
HEADER = (
    "# Written by rocmpanel (Setup tab or `rocmpanel env`). The systemd user manager reads\n"
    "# this file when your session starts: changes apply from the next login.\n"
)


def _handwritten(name: str) -> str:
    """A file as the stores read it: bytes decoded so that they encode back unchanged."""
    text = decode((HANDWRITTEN / name).read_bytes())
    assert text is not None
    return text


def _broken(starts: int, ends: int) -> str:
    return (
        f"the rocmpanel block markers are broken ({starts} start and {ends} end marker lines); "
        f"fix the file by hand: keep one '{BEGIN}' line and one '{END}' line after it"
    )


def test_the_markers_and_header_are_the_documented_text() -> None:
    assert env_formats.BLOCK_BEGIN == BEGIN
    assert env_formats.BLOCK_END == END
    assert env_formats.BLOCK_NOTE == NOTE
    assert env_formats.ENVD_HEADER == HEADER


# ---- hand-written ~/.profile files ------------------------------------------------------------


def test_handwritten_profile_without_block_reads_nothing_and_gets_a_block_at_the_end() -> None:
    text = _handwritten("profile_user_lines")
    # Only the managed block is rocmpanel's: the user's own exports are not read.
    assert env_formats.parse_profile(text) == {}
    new = env_formats.render_profile(text, [("HSA_OVERRIDE_GFX_VERSION", "11.0.0")])
    assert new == (text + f"{BEGIN}\n{NOTE}\nexport HSA_OVERRIDE_GFX_VERSION='11.0.0'\n{END}\n")
    assert encode(new) == (HANDWRITTEN / "profile_user_lines").read_bytes() + (
        f"{BEGIN}\n{NOTE}\nexport HSA_OVERRIDE_GFX_VERSION='11.0.0'\n{END}\n".encode()
    )
    # An unset of a variable the block does not have leaves the very same text.
    assert env_formats.render_profile(text, [("EDITOR", None)]) is text


def test_handwritten_profile_block_in_the_middle_is_read_as_sh_reads_it() -> None:
    text = _handwritten("profile_block_middle")
    assert env_formats.parse_profile(text) == {
        "HSA_OVERRIDE_GFX_VERSION": "10.3.0",
        "ROCM_PATH": "$HOME/rocm",
        "MIOPEN_USER_DB_PATH": "/tmp/my db's",
        "PYTORCH_ROCM_ARCH": "gfx1030",
        "LD_LIBRARY_PATH": "/opt/rocm/lib:$LD_LIBRARY_PATH",
        "AMD_LOG_LEVEL": "1",  # sh ends the word at ';' (the second export is not ours to read)
        "PADDED": "  two  spaces  ",
    }


def test_handwritten_profile_block_in_the_middle_is_rewritten_in_place() -> None:
    text = _handwritten("profile_block_middle")
    changes = [
        ("HSA_OVERRIDE_GFX_VERSION", "11.0.0"),
        ("PYTORCH_ROCM_ARCH", None),
        ("ROCM_PATH", "$HOME/rocm-6.4"),
        ("HIP_VISIBLE_DEVICES", "0"),
    ]
    new = env_formats.render_profile(text, changes, references={"ROCM_PATH"})
    assert new == (
        "# set by me\n"
        "export EDITOR=vim\n"
        f"{BEGIN}\n{NOTE}\n"
        "export HSA_OVERRIDE_GFX_VERSION='11.0.0'\n"
        'export ROCM_PATH="$HOME/rocm-6.4"\n'
        "export MIOPEN_USER_DB_PATH='/tmp/my db'\\''s'\n"
        'export LD_LIBRARY_PATH="/opt/rocm/lib:\\$LD_LIBRARY_PATH"\n'
        "export AMD_LOG_LEVEL=1; export AMD_SERIALIZE_KERNEL=3\n"
        "export PADDED='  two  spaces  '\n"
        "export HIP_VISIBLE_DEVICES='0'\n"
        f"{END}\n"
        "alias ll='ls -l'\n"
    )
    assert new is not None
    assert env_formats.parse_profile(new)["ROCM_PATH"] == "$HOME/rocm-6.4"


def test_handwritten_profile_with_crlf_keeps_each_line_end() -> None:
    text = _handwritten("profile_crlf")
    assert env_formats.parse_profile(text) == {
        "HSA_OVERRIDE_GFX_VERSION": "10.3.0",
        "MIOPEN_FIND_MODE": "FAST",
    }
    new = env_formats.render_profile(
        text, [("HSA_OVERRIDE_GFX_VERSION", "11.0.0"), ("HIP_VISIBLE_DEVICES", "0")]
    )
    assert new == (
        "# from a Windows editor\r\nexport EDITOR=nano\r\n"
        f"{BEGIN}\r\n"
        "export HSA_OVERRIDE_GFX_VERSION='11.0.0'\r\n"
        "export MIOPEN_FIND_MODE=FAST\r\n"
        "export HIP_VISIBLE_DEVICES='0'\n"
        f"{END}\r\n"
    )
    gone = env_formats.render_profile(
        text, [("HSA_OVERRIDE_GFX_VERSION", None), ("MIOPEN_FIND_MODE", None)]
    )
    assert gone == "# from a Windows editor\r\nexport EDITOR=nano\r\n"


def test_handwritten_profile_without_final_newline_gets_one_before_the_block() -> None:
    text = _handwritten("profile_no_final_newline")
    assert env_formats.parse_profile(text) == {}
    new = env_formats.render_profile(text, [("A", "1")])
    assert new == f"# mine\nexport EDITOR=vim\n{BEGIN}\n{NOTE}\nexport A='1'\n{END}\n"


@pytest.mark.parametrize(
    ("name", "starts", "ends"),
    [("profile_markers_reversed", 1, 1), ("profile_block_twice", 2, 2)],
)
def test_handwritten_profile_with_broken_markers_is_refused_not_duplicated(
    name: str, starts: int, ends: int
) -> None:
    text = _handwritten(name)
    with pytest.raises(env_formats.BlockError) as parsed:
        env_formats.parse_profile(text)
    assert str(parsed.value) == _broken(starts, ends)
    with pytest.raises(env_formats.BlockError) as rendered:
        env_formats.render_profile(text, [("HSA_OVERRIDE_GFX_VERSION", "11.0.0")])
    assert str(rendered.value) == _broken(starts, ends)


@pytest.mark.parametrize(
    ("text", "starts", "ends"),
    [
        (f"{BEGIN}\nexport A=1\n", 1, 0),
        (f"export A=1\n{END}\n", 0, 1),
        (f"{BEGIN}\n{BEGIN}\n{END}\n", 2, 1),
        (f"{BEGIN}\n{END}\n{END}\n", 1, 2),
        (f"{BEGIN}\n{END} \n", 1, 0),
        (f"{BEGIN}X\n{END}\n", 0, 1),
        (f"{BEGIN}\n{END}X\n", 1, 0),
        # A marker with a trailing space is not one: one start after one end.
        (f"{BEGIN} \n{END}\n{BEGIN}\n", 1, 1),
    ],
)
def test_a_missing_or_repeated_marker_is_refused(text: str, starts: int, ends: int) -> None:
    with pytest.raises(env_formats.BlockError) as info:
        env_formats.find_block(env_formats.split_lines(text))
    assert str(info.value) == _broken(starts, ends)


@pytest.mark.parametrize(
    ("lines", "span"),
    [
        ([], None),
        (["x\n"], None),
        ([f"{BEGIN}\n", f"{END}\n"], (0, 1)),
        (["a\n", f"{BEGIN}\r\n", "b\n", f"{END}"], (1, 3)),
    ],
)
def test_find_block_spans(lines: list[str], span: tuple[int, int] | None) -> None:
    assert env_formats.find_block(lines) == span


# ---- hand-written environment.d files ---------------------------------------------------------

HANDWRITTEN_ENVD = {
    "HSA_OVERRIDE_GFX_VERSION": "10.3.0",
    "MESSAGE": "value with spaces",
    "INDENTED": "yes",
    "WINDOWS_STYLE": "C:\\Program Files\\AMD\\ROCm",
    "QUOTED": 'say "hi" \\o/',
    "APOSTROPHE": "it's",
    "ESCAPED_SPACE": "trailing ",
    "PADDED": "  two  spaces  ",
    "ROCM_PATH": "$HOME/rocm",
    "PRICE": "5$",
    "LONG": "first second",
}


def test_handwritten_environment_d_is_read_as_systemd_reads_it() -> None:
    assert env_formats.parse_environment_d(_handwritten("envd_handwritten.conf")) == (
        HANDWRITTEN_ENVD
    )


def test_handwritten_environment_d_is_rewritten_line_by_line() -> None:
    text = _handwritten("envd_handwritten.conf")
    changes = [
        ("HSA_OVERRIDE_GFX_VERSION", "11.0.0"),
        ("MESSAGE", None),
        ("LONG", None),
        ("WINDOWS_STYLE", "D:\\AMD"),
        ("HIP_VISIBLE_DEVICES", "0"),
    ]
    new = env_formats.render_environment_d(text, changes)
    assert new == (
        "# My ROCm settings, written by hand.\n"
        "; an old-style comment\n"
        "\n"
        "HSA_OVERRIDE_GFX_VERSION=11.0.0\n"
        "  INDENTED = yes\n"
        'WINDOWS_STYLE="D:\\\\AMD"\n'
        'QUOTED="say \\"hi\\" \\\\o/"\n'
        "APOSTROPHE=it's\n"
        "ESCAPED_SPACE=trailing\\ \n"
        'PADDED="  two  spaces  "\n'
        "ROCM_PATH=$HOME/rocm\n"
        "PRICE=5$$\n"
        "HIP_VISIBLE_DEVICES=0\n"
    )
    assert new is not None
    expected = dict(HANDWRITTEN_ENVD, HSA_OVERRIDE_GFX_VERSION="11.0.0", WINDOWS_STYLE="D:\\AMD")
    del expected["MESSAGE"], expected["LONG"]
    assert env_formats.parse_environment_d(new) == dict(expected, HIP_VISIBLE_DEVICES="0")


def test_handwritten_environment_d_with_crlf_and_no_final_newline() -> None:
    text = _handwritten("envd_crlf.conf")
    assert env_formats.parse_environment_d(text) == {
        "HSA_OVERRIDE_GFX_VERSION": "10.3.0",
        "MIOPEN_FIND_MODE": "FAST",
        "ROC_ENABLE_PRE_VEGA": "1",
    }
    changes = [
        ("HSA_OVERRIDE_GFX_VERSION", "11.0.0"),
        ("ROC_ENABLE_PRE_VEGA", "0"),
        ("HIP_VISIBLE_DEVICES", "0"),
    ]
    assert env_formats.render_environment_d(text, changes) == (
        "# edited in Notepad\r\n"
        "HSA_OVERRIDE_GFX_VERSION=11.0.0\r\n"
        'MIOPEN_FIND_MODE="FAST"\r\n'
        "ROC_ENABLE_PRE_VEGA=0\n"
        "HIP_VISIBLE_DEVICES=0\n"
    )
    assert env_formats.render_environment_d(text, [("ROC_ENABLE_PRE_VEGA", None)]) == (
        '# edited in Notepad\r\nHSA_OVERRIDE_GFX_VERSION=10.3.0\r\nMIOPEN_FIND_MODE="FAST"\r\n'
    )


# ---- environment.d: new files, quoting, reading -------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [[("A", "1"), ("B", None)], [("B", None), ("A", "1")]],
    ids=["set-unset", "unset-set"],
)
def test_set_plus_unset_on_a_new_environment_d_file_keeps_the_set(
    changes: list[env_formats.Change],
) -> None:
    assert env_formats.render_environment_d(None, changes) == HEADER + "A=1\n"


def test_no_file_and_only_unsets_is_still_no_file() -> None:
    assert env_formats.render_environment_d(None, [("A", None), ("B", None)]) is None
    assert env_formats.render_environment_d(None, []) is None
    # An existing empty file is a file: no header is added to it.
    assert env_formats.render_environment_d("", [("A", "1")]) == "A=1\n"
    assert env_formats.render_environment_d("", [("A", None)]) == ""


def test_environment_d_set_of_a_repeated_name_keeps_the_last_place_once() -> None:
    text = "A=1\nB=2\nA=3\n"
    assert env_formats.render_environment_d(text, [("A", "9")]) == "B=2\nA=9\n"
    assert env_formats.render_environment_d(text, [("A", None)]) == "B=2\n"
    assert env_formats.render_environment_d(text, [("C", None)]) == text


@pytest.mark.parametrize(
    ("value", "references", "written"),
    [
        ("", False, ""),
        ("AZaz09_./:,+=@%{}-", False, "AZaz09_./:,+=@%{}-"),
        ("a$b", False, "a$$b"),
        ("a$b", True, "a$b"),
        ("/x:${PATH}", True, "/x:${PATH}"),
        ("a b", False, '"a b"'),
        (" lead", False, '" lead"'),
        ("trail ", False, '"trail "'),
        ("it's", False, '"it\'s"'),
        ('say "hi"', False, '"say \\"hi\\""'),
        ("C:\\x", False, '"C:\\\\x"'),
        ("#x", False, '"#x"'),
        ("a\tb", False, '"a\tb"'),
        ("a b$c", False, '"a b$$c"'),
        ("a b$c", True, '"a b$c"'),
    ],
)
def test_quote_envd(value: str, references: bool, written: str) -> None:
    assert env_formats.quote_envd(value, references) == written
    if not references:
        line = f"A={written}\n"
        assert env_formats.parse_environment_d(line) == {"A": value}


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("", ""),
        ("plain", "plain"),
        ("  lead and trail  ", "lead and trail"),
        ("a  b", "a  b"),
        ("x \t\r", "x"),
        ("x\\ ", "x "),
        ("x\\  ", "x "),
        ("\\ x", " x"),
        ("a\\b", "ab"),
        ("x\\", "x"),
        ('"  q  "', "  q  "),
        ('  "q"  ', "q"),
        ("'a\\b'", "a\\b"),
        ("'a\"b'", 'a"b'),
        ('"a\'b"', "a'b"),
        ('"C:\\Users\\me"', "C:\\Users\\me"),
        ('"\\"\\\\\\`\\$"', '"\\`$'),
        ('"\\n"', "\\n"),
        ('"a\\', "a"),
        ('"open', "open"),
        ("'open", "open"),
        ("it's", "it's"),
        ('a"b"', 'a"b"'),
        ('"a"b', "ab"),
        ("'a' 'b'", "ab"),
        ('"a" b ', "ab"),
        ("'a'\"b\"", "ab"),
        ("a 'b'", "a 'b'"),
        ('"a" "b"', "ab"),
        ("'a''b'", "ab"),
        ("a\\b c", "ab c"),
        ("Xeon X", "Xeon X"),
    ],
)
def test_unquote_envd_reads_values_as_systemd_does(raw: str, value: str) -> None:
    assert env_formats.unquote_envd(raw) == value


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("A=1\n", {"A": "1"}),
        ("A=b=c\n", {"A": "b=c"}),
        ("A=1\nA=2\n", {"A": "2"}),
        ("_a9=x", {"_a9": "x"}),
        ("\tA\t=\t1\n", {"A": "1"}),
        ("# A=1\n", {}),
        ("  # A=1\n", {}),
        ("; A=1\n", {}),
        ("\t;A=1\n", {}),
        ("9A=1\nA-B=1\nexport A=1\nA\n", {}),
        ("A=1 \\\n  2\n", {"A": "1   2"}),
        ("A=x \\\nB=2\n", {"A": "x B=2"}),
        ("A=x \\", {"A": "x"}),
        ("A=$$HOME $${X}\n", {"A": "$HOME ${X}"}),
        ("A=$HOME\n", {"A": "$HOME"}),
        ("A=\\X\nB=1\n", {"A": "X", "B": "1"}),
        ("A=aX\n", {"A": "aX"}),
    ],
)
def test_parse_environment_d(text: str, values: dict[str, str]) -> None:
    assert env_formats.parse_environment_d(text) == values


def test_a_continued_line_is_one_assignment_when_rewritten() -> None:
    text = "A=1 \\\n  2\nB=3\n"
    assert env_formats.render_environment_d(text, [("A", "x")]) == "A=x\nB=3\n"
    assert env_formats.render_environment_d(text, [("B", None)]) == "A=1 \\\n  2\n"
    # A continuation open at the very end of the file: the next line must not join it.
    assert env_formats.render_environment_d("A=1 \\\n", [("B", "2")]) == "A=1 \\\n\nB=2\n"
    assert env_formats.render_environment_d("A=1\n", [("B", "2")]) == "A=1\nB=2\n"


def test_environment_d_keeps_references_only_for_the_names_given() -> None:
    changes = [("PATH", "/opt/rocm/bin:$PATH"), ("LIT", "$PATH")]
    assert env_formats.render_environment_d("", changes, references={"PATH"}) == (
        "PATH=/opt/rocm/bin:$PATH\nLIT=$$PATH\n"
    )
    text = "PATH=/old\nLIT=old\n"
    assert env_formats.render_environment_d(text, changes, references={"PATH"}) == (
        "PATH=/opt/rocm/bin:$PATH\nLIT=$$PATH\n"
    )


# ---- value checks -----------------------------------------------------------------------------

NUL = "the value contains a NUL character, which no environment can hold."
LINE_BREAK = "the value contains a line break; environment files hold one line per variable."
SURROGATE = "the value contains characters that are not valid text (lone surrogates)."
COMMAND = (
    "the value contains ` or $( (shell command substitution); rocmpanel refuses them "
    "so that no environment file it writes can ever run a command."
)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", None),
        ("/opt/rocm $HOME ${X} (a) 'q' \"d\" \\ \t", None),
        ("a\x00b", NUL),
        ("a\x00\nb", NUL),
        ("a\nb", LINE_BREAK),
        ("a\rb", LINE_BREAK),
        ("a\udcffb\n", LINE_BREAK),
        ("\ud800", SURROGATE),
        ("\udfff", SURROGATE),
        ("\ud7ff\ue000", None),
        ("a\udc80`", SURROGATE),
        ("`id`", COMMAND),
        ("$(id)", COMMAND),
        ("$ (id)", None),
    ],
)
def test_unsafe_value_reason(value: str, reason: str | None) -> None:
    assert env_formats.unsafe_value_reason(value) == reason


def _not_a_reference(shown: str) -> str:
    return (
        f"{shown!r} is not a plain variable reference: in a path or PATH-like value, $ may only "
        "start a reference to another variable, written $NAME or ${NAME} (for example "
        "/opt/rocm/bin:$PATH). Shell forms such as ${NAME:-x}, ${NAME/a/b}, $1 or $$ mean "
        "different things (or fail) in ~/.profile and environment.d, so they are refused."
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("$A$B", None),
        ("${A}${B}/x", None),
        ("$A:${B}x$_c", None),
        ("$A$", "$"),
        ("${ABCDEFGHIJKLMNOP:-x}", "${ABCDEFGHIJ"),
        ("x${ABCDEFGHIJK", "${ABCDEFGHIJ"),
        ("$A ${", "${"),
        ("${A }", "${A }"),
        ("${}", "${}"),
        ("$1:$PATH", "$1:$PATH"),
        ("$A$1$B", "$1$B"),
    ],
)
def test_reference_problem_shows_twelve_characters_from_the_bad_dollar(
    value: str, shown: str | None
) -> None:
    problem = env_formats.reference_problem(value)
    assert problem == (None if shown is None else _not_a_reference(shown))


# ---- small helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a\n"]),
        ("a\r\nb", ["a\r\n", "b"]),
        ("\n\nx\r", ["\n", "\n", "x\r"]),
    ],
)
def test_split_lines(text: str, lines: list[str]) -> None:
    assert env_formats.split_lines(text) == lines


def test_split_and_join_lists() -> None:
    assert env_formats.split_list("", ":") == []
    assert env_formats.split_list("a", ":") == ["a"]
    assert env_formats.split_list("a::b", ":") == ["a", "", "b"]
    assert env_formats.split_list("C:\\a;C:\\b", ";") == ["C:\\a", "C:\\b"]
    assert env_formats.join_list(["a", "b"], ";") == "a;b"
    assert env_formats.join_list([], ":") == ""


# ---- ~/.profile: quoting, reading, writing --------------------------------------------------


@pytest.mark.parametrize(
    ("value", "references", "word"),
    [
        ("", False, "''"),
        ("it's", False, "'it'\\''s'"),
        ('a"b\\c`d$e', False, "'a\"b\\c`d$e'"),
        ("", True, '""'),
        ('/x:$PATH "q" \\ `', True, '"/x:$PATH \\"q\\" \\\\ \\`"'),
    ],
)
def test_quote_sh(value: str, references: bool, word: str) -> None:
    assert env_formats.quote_sh(value, references) == word
    assert env_formats.unquote_sh(word) == value


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("", ""),
        (" \t'x y' ", "x y"),
        ("a;b", "a"),
        ("a&b", "a"),
        ("a|b", "a"),
        ("a<b", "a"),
        ("a>b", "a"),
        ("a(b", "a"),
        ("a)b", "a"),
        ("'a;b'", "a;b"),
        ("a\tb", "a"),
        ("'open", "open"),
        ('"open', "open"),
        ('"a\\', "a\\"),
        ('"\\n\\$"', "\\n$"),
        ('"a"b', "ab"),
        ("a\\", "a\\"),
        ("\\'", "'"),
        ("''x", "x"),
        ("'x'\r", "x\r"),
        ("Xa X", "Xa"),
        ("aXb", "aXb"),
        ('x"y"', "xy"),
        ('"a\\$', "a$"),
        ("x\\'", "x'"),
        ("\\ab", "ab"),
    ],
)
def test_unquote_sh_edges(raw: str, value: str) -> None:
    assert env_formats.unquote_sh(raw) == value


@pytest.mark.parametrize(
    ("body", "values"),
    [
        ("", {}),
        ("export A=1\n", {"A": "1"}),
        ("export A=1\r\n", {"A": "1"}),
        ("export A=1\nexport A=2\n", {"A": "2"}),
        ("A=1\nexport  B=1\n export C=1\nexport 9D=1\n# export E=1\n", {}),
        ("export A=\n", {"A": ""}),
        ("export A=x\x0c\n", {"A": "x\x0c"}),
        ("export A=xX\n", {"A": "xX"}),
        ("\rexport A=1\n", {}),
    ],
)
def test_parse_profile_reads_exports_inside_the_block_only(
    body: str, values: dict[str, str]
) -> None:
    text = f"export OUT=1\n{BEGIN}\n{body}{END}\nexport AFTER=1\n"
    assert env_formats.parse_profile(text) == values


def test_export_line_and_block() -> None:
    assert env_formats.export_line("A", "x") == "export A='x'\n"
    assert env_formats.export_line("A", "$B", references=True, ending="\r\n") == (
        'export A="$B"\r\n'
    )
    block = env_formats.render_block({"A": "1", "P": "/x:$PATH"}, references={"P"})
    assert block == f"{BEGIN}\n{NOTE}\nexport A='1'\nexport P=\"/x:$PATH\"\n{END}\n"


def test_render_profile_with_no_file() -> None:
    assert env_formats.render_profile(None, [("A", None)]) is None
    assert env_formats.render_profile("", [("A", None)]) == ""
    assert env_formats.render_profile(None, [("A", "1"), ("B", None)]) == (
        f"{BEGIN}\n{NOTE}\nexport A='1'\n{END}\n"
    )
    assert env_formats.render_profile("x\n", [("P", "$HOME/p")], references={"P"}) == (
        f'x\n{BEGIN}\n{NOTE}\nexport P="$HOME/p"\n{END}\n'
    )


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        (f"{NOTE}\n", False),
        (f"\n  \n{NOTE}\r\n", False),
        ("", False),
        ("# mine\n", True),
        ("A=1\n", True),
        ("export KEEP=1\n", True),
    ],
)
def test_a_block_left_without_variables_goes_unless_it_has_user_lines(
    body: str, kept: bool
) -> None:
    text = f"x\n{BEGIN}\n{body}export A=1\n{END}\ny\nz\n"
    new = env_formats.render_profile(text, [("A", None)])
    assert new == (f"x\n{BEGIN}\n{body}{END}\ny\nz\n" if kept else "x\ny\nz\n")


def test_render_profile_rewrites_a_repeated_export_once_at_its_last_place() -> None:
    text = f"{BEGIN}\nexport A=1\nexport B=2\nexport A=3\n{END}\n"
    assert env_formats.render_profile(text, [("A", "9")]) == (
        f"{BEGIN}\nexport B=2\nexport A='9'\n{END}\n"
    )
    assert env_formats.render_profile(text, [("A", "9")], references={"A"}) == (
        f'{BEGIN}\nexport B=2\nexport A="9"\n{END}\n'
    )
    assert env_formats.render_profile(text, [("C", None)]) == text
    # A line that does not start with "export " is the user's, even with an export after a CR.
    odd = f"{BEGIN}\n\rexport A=1\n{END}\n"
    assert env_formats.render_profile(odd, [("A", "2")]) == (
        f"{BEGIN}\n\rexport A=1\nexport A='2'\n{END}\n"
    )


def test_render_profile_adds_new_names_to_the_block_with_their_quoting() -> None:
    text = f"{BEGIN}\nexport A=1\n{END}\n"
    changes = [("P", "/x:$PATH"), ("L", "$PATH")]
    assert env_formats.render_profile(text, changes, references={"P"}) == (
        f"{BEGIN}\nexport A=1\nexport P=\"/x:$PATH\"\nexport L='$PATH'\n{END}\n"
    )


def test_quoting_is_literal_by_default() -> None:
    assert env_formats.quote_envd("a$b c") == '"a$$b c"'
    assert env_formats.quote_sh("$HOME") == "'$HOME'"
