"""The plan's launch configs as copyable blocks: title, file name, the text in <pre><code>, a
Copy button (a few lines of inline script: the Clipboard API where the page is a secure context,
else the selection and execCommand), and what the user still chooses."""

from __future__ import annotations

import re
from html import escape

from service.core.launch.launch_types import LaunchConfig
from service.core.report.answer_types import Answer

# Copies the text of the element named by the button's data-copy; says "Copied" or, where the
# browser refuses, leaves the text selected for Ctrl+C.
COPY_SCRIPT = """
document.querySelectorAll('button.copy').forEach(function (button) {
  button.addEventListener('click', function () {
    var code = document.getElementById(button.getAttribute('data-copy'));
    var said = button.textContent;
    function tell(word) {
      button.textContent = word;
      setTimeout(function () { button.textContent = said; }, 1600);
    }
    function select() {
      var folded = code.closest('details');
      if (folded) { folded.open = true; }
      var range = document.createRange();
      range.selectNodeContents(code);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      var done = false;
      try { done = document.execCommand('copy'); } catch (e) { done = false; }
      tell(done ? 'Copied' : 'Selected: press Ctrl+C');
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(code.textContent).then(function () { tell('Copied'); },
                                                            select);
    } else {
      select();
    }
  });
});
"""


def block_id(tool: str) -> str:
    return "code-" + re.sub(r"[^a-z0-9-]", "-", tool.lower())


def copy_button(target: str, label: str = "Copy") -> str:
    return f"<button type=button class=copy data-copy='{target}'>{escape(label)}</button>"


def launch_block(config: LaunchConfig) -> str:
    target = block_id(config.tool)
    where = (f"save as <code>{escape(config.filename)}</code>" if config.filename
             else "run as a command")
    notes = "".join(f"<li>{escape(note)}</li>" for note in config.notes)
    run = ""
    if config.command:  # a file's config: the line that uses it, copyable on its own
        run = (f"<div class=bar><span class=muted>then run</span>"
               f"{copy_button(target + '-run')}</div><pre><code id={target}-run>"
               f"{escape(config.command)}</code></pre>")
    return (f"<section class='launch card' id=launch-{target[5:]}><div class=bar>"
            f"<h3>{escape(config.title)}</h3><span class=muted>{where}</span>"
            f"{copy_button(target)}</div><pre><code id={target}>{escape(config.text)}"
            f"</code></pre>{run}" + (f"<ul class=muted>{notes}</ul>" if notes else "")
            + "</section>")


def launch_section(answer: Answer) -> str:
    if not answer.launch:
        return ""
    blocks = "".join(launch_block(config) for config in answer.launch.values())
    return f"<h2>Launch configs</h2>{blocks}"
