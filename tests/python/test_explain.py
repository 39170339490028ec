"""``torchlower.explain``: the text of ``check`` for one function, and in Jupyter HTML with
each site coloured by outcome, a hover title with rule or code, message and hint, and the
emitted Rust folded; executed in a real notebook kernel with nbclient."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import torchlower

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MODEL = REPO / "examples" / "model.py"

MIXED = '''\
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu2D


def native_one(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.relu(x) * 2.0


def falls_back(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.fft.fft(x) + x
'''


def _spans(markup: str) -> list[tuple[str, str, str]]:
    """(class, title, innermost text) of each site span."""
    return [(cls, html.unescape(title), html.unescape(text)) for cls, title, text in
            re.findall(r'<span class="tl-(claimed|rejected|not_covered)" title="([^"]*)">([^<]*)', markup)]


def test_text_is_the_check_text_of_the_function():
    sys.path.insert(0, str(MODEL.parent))
    try:
        import model
    finally:
        sys.path.pop(0)
    text = str(torchlower.explain(model.pooled_head))
    assert text.splitlines()[0].endswith("def pooled_head — native, 3 sites (3 fused)")
    assert "alternating_stack" not in text


def test_html_colours_each_site_by_outcome_with_its_rule_or_code():
    explanation = torchlower.explain(MIXED, "mixed.py")
    markup = explanation._repr_html_()
    spans = _spans(markup)
    report = explanation.report
    sites = [site for f in report["functions"] for site in f["sites"]]
    assert sorted(cls for cls, _, _ in spans) == sorted(site["outcome"] for site in sites)
    for site in sites:
        key = site.get("rule") if site["outcome"] == "claimed" else site["code"]
        assert any(cls == site["outcome"] and f"[{key}]" in title for cls, title, _ in spans), (site, spans)
    rejected = [title for cls, title, _ in spans if cls != "claimed"]
    assert any("hint:" in title for title in rejected)
    assert "<details><summary>Emitted Rust" in markup and "tl_body_" in markup
    assert 'class="tl-fallback"' in markup and 'class="tl-native"' in markup


def test_html_escapes_source_and_messages():
    source = MIXED.replace("native_one", "the_<b>_one").replace("* 2.0", "* 2.0  # </pre><script>alert(1)</script>")
    source = source.replace("def the_<b>_one", "def tag_one")  # a name must stay an identifier
    markup = torchlower.explain(source, "x<y>.py")._repr_html_()
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    body = markup[markup.index("</style>"):]
    assert body.count("<pre>") == body.count("</pre>")


def test_nested_sites_nest_in_the_markup():
    markup = torchlower.explain(MODEL)._repr_html_()
    line = next(l for l in markup.split("\n") if "F.linear(x, weight, bias).relu().mean(dim=1)" in re.sub(r"<[^>]+>", "", l))
    assert line.count('<span class="tl-claimed"') == 3 and line.count("</span>") == 4  # 3 sites + the line number


def test_explain_in_a_jupyter_kernel_renders_html(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(f"import sys; sys.path.insert(0, {str(MODEL.parent)!r})\nimport torchlower, model"),
        nbformat.v4.new_code_cell("torchlower.explain(model.pooled_head)"),
        nbformat.v4.new_code_cell(f"torchlower.explain({MIXED!r}, 'mixed.py')"),
    ]
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [cell.outputs for cell in notebook.cells]
    assert not outputs[0]
    for cell_outputs in outputs[1:]:
        (result,) = [o for o in cell_outputs if o.output_type == "execute_result"]
        assert "text/html" in result.data and "text/plain" in result.data
        assert 'class="tl-explain"' in result.data["text/html"]
    assert 'class="tl-not_covered"' in outputs[2][0].data["text/html"] or 'class="tl-rejected"' in outputs[2][0].data["text/html"]
