from benchmarks.code_structure import _imports_inside_functions, structure


def test_structure_counts_the_checkout_and_a_commit_alike():
    here, head = structure(), structure("HEAD")
    assert set(here["packages"]) == set(head["packages"]) >= {"models", "train", "(top)"}
    assert here["lines"] == sum(lines for lines, _ in here["packages"].values())
    assert here["files"] == sum(files for _, files in here["packages"].values())
    longest = here["longest_functions"]
    assert len(longest) == 6 and longest == sorted(longest, reverse=True)
    assert 0 < here["kbert_imports_inside_functions"] <= here["imports_inside_functions"]


def test_only_imports_in_a_function_body_count():
    import ast

    tree = ast.parse(
        "import os\n"
        "def f():\n"
        "    import json\n"
        "    from kbert.models import Encoder\n"
        "    def g():\n"
        "        import kbert.text\n"
        "class C:\n"
        "    import re\n"
    )
    assert _imports_inside_functions(tree) == (3, 2)
