"""The home page: a form whose submit opens the permalink of an estimate (plain GET, no JS)."""

from __future__ import annotations

from functools import cache
from html import escape

from service.core.hardware.gpus import all_gpus
from service.core.model.presets import all_presets
from service.schemas.fields import CHOICES
from service.web.layout import page


def _options(name: str, blank: str = "(default)") -> str:
    items = [f"<option value=''>{blank}</option>"]
    items += [f"<option>{escape(v)}</option>" for v in CHOICES[name]]
    return "".join(items)


def _input(name: str, label: str, placeholder: str = "", kind: str = "text",
           extra: str = "") -> str:
    return (f"<label>{label}<input name={name} type={kind} placeholder='{escape(placeholder)}' "
            f"{extra}></label>")


@cache
def render_home() -> str:
    models = "".join(f"<option value='{escape(p.id)}'>{escape(p.name)}</option>"
                     for p in all_presets())
    gpus = "".join(f"<option value='{escape(g.id)}'>{escape(g.name)}</option>"
                   for g in all_gpus())
    form = (
        "<form class=grid method=get action='/v1/estimate'>"
        + _input("model", "model", "llama-3-8b or 7B", extra="list=models required")
        + f"<label>task<select name=task>{_options('task')}</select></label>"
        + _input("seq_len", "sequence length", "4096", "number", "min=1")
        + _input("micro_batch", "micro-batch", "1", "number", "min=1")
        + _input("global_batch", "global batch", "none", "number", "min=1")
        + "<label>ZeRO stage<select name=zero_stage><option value=''>(default)</option>"
        + "".join(f"<option>{i}</option>" for i in range(4)) + "</select></label>"
        + f"<label>recompute<select name=recompute>{_options('recompute')}</select></label>"
        + f"<label>quantization<select name=quantization>{_options('quantization')}"
        + "</select></label>"
        + _input("lora_rank", "LoRA rank", "none", "number", "min=1")
        + _input("concurrent", "concurrent sequences (serving)", "1", "number", "min=1")
        + _input("gpu", "GPU", "a100-40gb", extra="list=gpus")
        + _input("gpu_count", "GPU count", "fewest that fit", "number", "min=1")
        + _input("tokens", "training tokens", "1e12")
        + "<label>&nbsp;<button type=submit>Estimate</button></label></form>"
        + f"<datalist id=models>{models}</datalist><datalist id=gpus>{gpus}</datalist>"
    )
    return page("fitcheck", (
        "<h1>Will it fit, and on how many GPUs?</h1>"
        "<p class=muted>Leave a field empty for the default; every default is listed in the "
        "report. The report's address is its permalink.</p>"
        f"<div class=card>{form}</div>"
        "<p class=muted>API: <a href='/docs'>/docs</a> · <a href='/v1/models'>/v1/models</a> · "
        "<a href='/v1/gpus'>/v1/gpus</a> · <a href='/readyz'>/readyz</a></p>"))
