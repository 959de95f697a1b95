"""One module per benchmark turning the data its measure() returned into a report section
(title, prose, tables, figures, notes, commands) and its goal verdicts.

Every module has build(b, data) -> (section, goals): section is a dict rendered by
report.py, goals a list of (goal, result text, met: True/False/None)."""
