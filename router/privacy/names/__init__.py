"""Person names (opt-in per route: `privacy_detect: [person]`), by rules with context, on CPU
and with no model: a name is taken where its context says it is one.

- Labelled fields: `"first_name": "Ana"`, `Name: Maria Gonzalez`, `customer=…`, in JSON, YAML,
  `.env`, logs and forms.
- Named columns of tables and SQL INSERTs (`first_name`, `last_name`, `customer`, …: tables.py).
- E-mail headers and trailers: `From: Ana Lima <ana@…>`, `Signed-off-by:`, `Author:`.
- Greetings (`Dear Ms Okafor,`, `Hi Tom,`), titles (`Dr. Chen Wei`), signature blocks (the
  line after `Best regards,`).
- Free text: two or three capitalised words led by a listed given name (`…called Priya Nair
  about…`), or ending in a listed family name; the lists (data/, SOURCES.md) cover many
  cultures. Given names that are also common English words (`Will`, `Mark`) need a listed
  family name after them.
- Names in running text that no rule finds: a small linear model over capitalised words of
  prose (names_model.py, trained on public corpora; data/SOURCES.md).

A generic label (`name`, `author`, `owner`) takes a value only when it looks like a person's
name: a listed given or family name in it, or two or more capitalised words none of which is a
common product or team word.

The modules, each importing only those above it:

- `lists`: the name lists (data/) and their loading.
- `forms`: how a name is written, as pieces of regular expression the rules share.
- `words`: what a value's words say (a name's form, listed, everyday) and where a name found
  starts and ends.
- Look-alikes, what the rules take for a person and is none: `places` (places, storms, a
  flight's cities), `software` (software, products, eponyms), `lookalikes` (firms, streets,
  institutions, a place's or a work's field).
- The rules, one module a kind of text: `labels` (labelled fields, mail headers, a record's
  heading), `columns` (a table's name columns), `messages` (greetings, sign-offs, signatures, a
  dialogue's speakers), `addressing` (a person spoken to or asked), `prose` (cue phrases of
  running text), `titles` (titles, offices, degrees), `authorship` (code, packages,
  bibliographies), `citations` (papers and court reports), `enumerations` (lists of people),
  `free_text` (listed names with no cue).
- `rules`: the anchored rules' table (expression, anchor, window, reader) and its pass.
- `person`: the entry point (the opt-in kind `person`), `find` (the rules, the prose model, the
  look-alikes dropped, each name's other places) and `find_rules` (the rules alone).

Nothing is imported here: callers import `router.privacy.names.person`, and each module imports
the ones it reads by their own path.
"""
