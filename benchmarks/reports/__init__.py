"""How each record family reads in `docs/results.md` and the README summary.

One module per program that writes records (`docs/results/<program>*.json`), found by
`benchmarks.report` without being listed anywhere: a lab with a record adds its module here and
touches no shared file. A module holds

- `STEMS`: the record names it renders; a record named `<stem>_<anything>` (another run of the
  same program) is rendered by the module with the longest such stem;
- `render(results)`: the record's section of `docs/results.md` (optional: without it the page
  lists the record's numbers);
- `headline(results)`: the record's line of the README summary (optional);
- `notes(name, results, results_dir)`: notes under the section, made from other records
  (optional);
- `CLAIM`: what the lab's source claims, one sentence stated under the record's title, above
  the tables that show what the run found (optional; the adaptation labs state theirs beside
  each row's paired difference, `_claims.py`);
- `SUMMARY_PARTS`: other runs' record names that hold part of the program's run at its defaults
  (split over runs), given a README line each beside the program's own (optional).

Modules whose name starts with "_" hold shared helpers, not a family.
"""
