"""Launch configs for a plan: the files and command lines that run it with the plan's stack.

One module per tool; ``launch_configs`` picks the ones that apply. Every key and flag written
here is checked by the tests against the tool's own definitions at a pinned version
(``tests/data/launch_tools``)."""
