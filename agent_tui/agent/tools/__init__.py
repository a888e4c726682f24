"""The tools the model can call: ``base`` (the Tool class, its context and results), one module per
built-in tool, and ``builtin.default_tools``.

Empty on purpose: the app imports ``base`` and a helper or two (``walk``, ``images``) before its
first frame, and a package that imported every tool made that cost the bash tool's and the grep
tool's imports too (28 ms of the app's 260 ms of imports).
"""
