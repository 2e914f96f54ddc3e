"""The anchored rules: each rule's expression, the anchor hyperscan finds first (one pass for
all) and the window around it that the expression searches, and the reader that judges a match
(a rule with none takes a value in a name's form). The rules' patterns and readers live in the
modules of their kind of text (py, py, py, …)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from router.privacy.anchors import Anchor, Anchors, search, windows
from router.privacy.names import addressing, authorship, citations, labels, messages, prose, titles
from router.privacy.names.forms import HONORIFIC, REPORTING
from router.privacy.names.words import addressed_name, any_listed, name_shaped, read_full_name, trim, words_of

# (pattern, rule, anchor, caseless, characters before the anchor's end, after it)
_RULES: tuple[tuple[re.Pattern[str], str, str, bool, int, int], ...] = (
    (labels.LABELLED, "name-label", labels.LABEL_ANCHOR, True, 48, 140),
    (labels.MAIL, "name-mail", r"[<(][^<>()\s@]+@[^<>()\s]+[>)]", False, 100, 4),
    (
        labels.ROLE,
        "name-role",
        r"(?:[Uu]ser|[Cc]ustomer|[Cc]lient|[Pp]atient|[Mm]ember|[Ee]mployee|[Cc]ontact|[Pp]assenger|[Gg]uest|[Tt]enant"
        r"|[Aa]pplicant)[ \t]+[A-Z]",
        False,
        16,
        100,
    ),
    (
        messages.GREETING,
        "name-greeting",
        r"(?:Dear|Hi|Hello|Hey|Hallo|Liebe|Sehr geehrte|Bonjour|Cher|Chère|Hola|Estimad|Querid|Ciao|Gentile|Caro|Cara"
        r"|Olá|Ola|Happy[ \t]+birthday|Congrats|Congratulations|Welcome|aboard|back)[a-z]{0,2}[ \t]",
        False,
        24,
        100,
    ),
    (
        prose.CUE,
        "name-cue",
        r"(?:my[ \t]+name[ \t]+is|my[ \t]+name's|your[ \t]+(?:full[ \t]+|first[ \t]+|last[ \t]+)?name\?"
        r"|maiden[ \t]+name[ \t]+is"
        r"|named[ \t]+(?:him|her)|directed[ \t]+by|i'm|i[ \t]+am|calls?[ \t]+me|ich[ \t]+hei(?:ß|ss)e"
        r"|mein[ \t]+name[ \t]+ist|je[ \t]+m['’]appelle|mon[ \t]+nom[ \t]+est|me[ \t]+llamo|mi[ \t]+nombre[ \t]+es"
        r"|mi[ \t]+chiamo|il[ \t]+mio[ \t]+nome[ \t]+è|meu[ \t]+nome[ \t]+é|mijn[ \t]+naam[ \t]+is"
        r"|nazywam[ \t]+się|jag[ \t]+heter|jmenuji[ \t]+se)[ \t]",
        True,
        60,
        100,
    ),
    (
        messages.SIGN_OFF,
        "name-signoff",
        r"(?:regards|wishes|thanks|thank you|thx|cheers|sincerely|respectfully|the best|take care|touch|soon|later"
        r"|see you|love|hugs|xoxo)[ \t]*[,!.]?[ \t]*(?:[-–—][ \t]*)?[A-Z]",
        True,
        60,
        100,
    ),
    (
        prose.HANDOFF,
        "name-handoff",
        r"(?:assigned[ \t]+to|(?:reported|reviewed|approved|requested|submitted|opened|closed|authored|written|off)"
        r"[ \t]+by|(?:escalated|forwarded|over)[ \t]+to|behalf[ \t]+of|(?:spoke|talked|meeting|met|up|check|checked)"
        r"[ \t]+(?:with|to)|out[ \t]+to|zugewiesen[ \t]+an|assignée?[ \t]+à|asignad[oa][ \t]+a|assegnat[oa][ \t]+a"
        r"|atribuíd[oa][ \t]+a|toegewezen[ \t]+aan|przypisan[eya][ \t]+do|tilldelad[ \t]+till)[ \t]+[A-Z]",
        True,
        60,
        100,
    ),
    (addressing.ASKED_DONE, "name-asked", rf"{addressing.ASKED_VERBS}[ \t]+[A-Z]", False, 24, 100),
    (citations.JOINED, "name-justice", r"(?:[Ii]n[ \t]+which|[Jj]oined[ \t]+by)[ \t]+[A-Z][A-Z]", False, 40, 200),
    (
        citations.JOINED,
        "name-justice",
        r"(?:[A-Z][A-Z]|J\.,)[ \t]+(?:filed|delivered|announced|wrote)[ \t]",
        False,
        60,
        40,
    ),
    (prose.AGED, "name-aged", r"[A-Za-z],[ \t]+[0-9]{1,2},[ \t]+[A-Z]", False, 80, 2),
    (titles.DEGREE, "name-degree", rf"[A-Za-z],[ \t]*(?:{titles.DEGREES})", False, 80, 16),
    (citations.CITED, "name-cited", r"[ \t(](?:1[5-9]|20)[0-9][0-9][a-z]?[);,:]", False, 160, 2),
    (prose.APPOSITIVE, "name-appositive", rf",[ \t]+{REPORTING}", False, 140, 16),
    (prose.KIN_OF, "name-kin", rf"['’]s[ \t]+(?:{prose.KIN_WORDS}|birthday|wedding|funeral)", True, 64, 16),
    (
        prose.KIN_BEFORE,
        "name-kin",
        rf"(?:my|our|his|her|their|your)[ \t]+(?:{prose.OWN_WORDS})[ \t]+[A-Z]",
        True,
        40,
        100,
    ),
    (
        addressing.FOR_TO,
        "name-for",
        r"for[ \t]+[A-Z][^ \t\n]{0,40}(?:[ \t]+[A-Z][^ \t\n]{0,40})?[ \t]+to[ \t]+[a-z]",
        False,
        100,
        8,
    ),
    (
        messages.GREETED_LOWER,
        "name-greeting-lower",
        r"(?:[Hh]ey|[Hh]i|[Hh]ello|[Tt]hanks|[Tt]hank[ \t]+you|[Mm]orning|[Cc]heers)[ \t]+[a-z]",
        False,
        16,
        60,
    ),
    (authorship.BIBTEX_PEOPLE, "name-bibtex", r"(?:author|editor)[ \t]*=[ \t]*[{\"]", True, 16, 620),
    (authorship.SHORTLOG, "name-shortlog", r"\n[ \t]*\d+\t[A-Z]", False, 40, 100),
    (
        authorship.PEOPLE_HEADING,
        "name-listed",
        r"(?:authors?|contributors?|maintainers?|credits|people|thanks[ \t]+to)",
        True,
        80,
        80,
    ),
    (
        citations.CAPTION,
        "name-caption",
        r"\n[ \t]*(?:Plaintiffs?|Defendants?|Petitioners?|Respondents?|Appellants?|Appellees?|Claimants?|Debtors?)",
        False,
        120,
        4,
    ),
    (prose.KIN_OTHER, "name-kin", rf"(?:{prose.OWN_OTHER})[ \t]+(?:{prose.OWN_OTHER_WORDS})[ \t]+[A-Z]", True, 40, 100),
    (
        prose.QUOTED_BY,
        "name-quoted",
        rf"[\"”»][ \t]*,?[ \t]+(?:{REPORTING}|{prose.REPORTING_OTHER})[ \t]+[A-Z]",
        False,
        30,
        100,
    ),
    (prose.QUOTED_THEN, "name-quoted", r"[,!?][\"”»][ \t]+[A-Z]", False, 4, 80),
    (prose.WITH_INITIAL, "name-initial", r"[^\W\d_][ \t]+[A-Z]\.?[ \t]+[A-Z]", False, 48, 48),
    (titles.TITLED, "name-title", rf"(?:{HONORIFIC}|M|Mme)\.?[ \t]+[A-Z]", False, 14, 100),
    (
        titles.TITLED_LOWER,
        "name-title-lower",
        r"(?:mr|mrs|ms|mx|dr|prof|dott|sig|sr|sra|srta)\.[ \t]+[A-Z]",
        False,
        14,
        100,
    ),
    (titles.TITLED_LOWER_CASE, "name-title-lower-case", r"(?:mr|mrs|ms|mx|dr|prof)\.[ \t]+[a-z]", False, 14, 100),
    (authorship.AT_AUTHOR, "name-tag", r"@(?:author|maintainer)[ \t]+[A-Z]", False, 16, 100),
    (authorship.R_PERSON, "name-r-person", r"person\([ \t]*(?:given[ \t]*=[ \t]*)?[\"'][A-Z]", False, 40, 120),
    (authorship.COPYRIGHT, "name-copyright", r"copyright[ \t]", True, 16, 100),
    (authorship.TODO_OWNER, "name-todo", r"(?:TODO|FIXME|XXX|HACK|NOTE)\([A-Z]", False, 8, 60),
    (
        authorship.PEOPLE_LIST,
        "name-manifest",
        r"(?:authors|maintainers|contributors|developers)[\"']?[ \t]*[:=][ \t]*\[",
        True,
        40,
        4,
    ),
    (
        messages.SALUTATION,
        "name-salutation",
        r"^[ \t]*[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)?[ \t]*,(?:[ \t]*\r?\n[ \t]*|[ \t]+)[A-Z]",
        False,
        60,
        4,
    ),
    (
        messages.SIGNATURE_ALONE,
        "name-signature-alone",
        r"[.!?)]\n[ \t]*[A-Z][a-z]+(?:[ \t]+(?:[A-Z]\.[ \t]*)?[A-Z][a-z]+)?[ \t]*[.!]?[ \t]*\r?$",
        False,
        60,
        4,
    ),
    (labels.NOTES_ADDRESS, "name-notes", r"[A-Za-z](?:/[A-Za-z][\w-]*){0,3}@[A-Za-z]", False, 80, 40),
    (labels.MAIL_INVERTED, "name-mail-inverted", r"\"[ \t]*[<(][^<>()\s@]+@[^<>()\s]+[>)]", False, 100, 4),
    (
        titles.OFFICE,
        "name-office",
        r"(?:President|Senator|Governor|Judge|Justice|Sen|Rep|Gov|Rev|Sir|Dame|Prof|Professor|Drs|Capt|Sgt|Lt|Col|Gen"
        r"|Adm|Doctor|Coach|Detective|Sergeant|Captain|Lieutenant|Colonel|Admiral|Minister|Mayor|Chancellor"
        r"|Pastor|Rabbi|Imam|Sheikh|Shaikh|Bishop|Cardinal|Ambassador|Nurse|Uncle|Aunt|Auntie|Grandma|Grandpa|Prince"
        r"|Princess|King|Queen|Lord|Lady|Father|Sister|Brother"
        r"|teacher|coach|doctor|lawyer|attorney|professor|cleric|leader|spokesman|spokeswoman|photographer|artist"
        r"|author|writer|singer|actor|actress|director|host|owner|instructor|trainer|therapist|dentist|nurse)\.?[ \t]+"
        r"[A-Z]",
        False,
        24,
        100,
    ),
    (
        messages.CLOSING,
        "name-signature",
        r"(?:regards|wishes|thanks|thank you|thx|cheers|sincerely|respectfully|yours|truly|faithfully|best"
        r"|take care|touch|soon|later|see you|love|hugs|xoxo|grüßen"
        r"|gruessen|grüße|cordialement|bien à vous|saludos|atentamente|saludo|saluti|atenciosamente|groet|groeten"
        r"|cumprimentos|poważaniem|pozdravem|hälsningar|mvh|--)"
        r"[ \t]*[,!.]?[ \t]*\r?\n",
        True,
        60,
        160,
    ),
)
_ANCHORS = Anchors([Anchor(anchor, caseless) for _p, _r, anchor, caseless, _b, _f in _RULES])


# The rules whose match is read by a function of its own (`anchored`): (text, match, rule) -> names.
Reader = Callable[[str, "re.Match[str]", str], Iterator[tuple[int, int, str]]]


_READERS: dict[str, Reader] = {
    "name-label": labels.read_label,
    "name-cited": citations.read_cited,
    "name-justice": citations.read_justices,
    "name-aged": prose.read_aged,
    "name-degree": titles.read_degree,
    "name-r-person": authorship.read_r_person,
    "name-copyright": authorship.read_copyright,
    "name-todo": addressing.read_addressed,
    "name-manifest": authorship.read_people_list,
    "name-salutation": messages.read_lone,
    "name-signature-alone": messages.read_lone,
    "name-notes": read_full_name,
    "name-mail-inverted": labels.read_inverted,
    "name-office": titles.read_office,
    "name-cue": prose.read_cue,
    "name-title": titles.read_title,
    "name-title-lower-case": titles.read_title_lower_case,
    "name-bibtex": authorship.read_bibtex,
    "name-listed": authorship.read_people_heading,
    "name-shortlog": read_full_name,
    "name-caption": citations.read_caption,
    "name-for": addressing.read_addressed,
    "name-greeting-lower": messages.read_greeting_lower,
    "name-kin": prose.read_around,
    "name-quoted": prose.read_around,
}


def anchored(text: str) -> Iterator[tuple[int, int, str]]:
    """The anchored rules' names: each rule's expression searched in the windows around its
    anchor's hits, a match judged by its rule's reader (`_READERS`) or, for a rule with none, by
    its value's form."""
    hits = _ANCHORS.ends(text)
    for index, (pattern, rule, _anchor, _caseless, back, forward) in enumerate(_RULES):
        if index not in hits:
            continue
        reader = _READERS.get(rule)
        for match in search(pattern, text, windows(text, hits[index], back, forward)):
            if reader is not None:
                yield from reader(text, match, rule)
                continue
            value = match.group(1)
            if rule == "name-initial":
                accepted = prose.initialled(value)
            elif rule == "name-handoff":
                accepted = prose.handed(value)
            elif rule == "name-appositive":
                accepted = prose.handed(value, alone=False)
            elif rule == "name-title-lower":
                # `ms. Quinzia` (a name no list holds, no everyday word), not `took 5 ms. Then`.
                accepted = (
                    name_shaped(value)
                    and len(words_of(value)) <= 4
                    and (
                        titles.not_everyday(value)
                        or (
                            not titles.AFTER_NUMBER.search(text, max(0, match.start() - 8), match.start())
                            and addressed_name(value)
                        )
                    )
                )
            elif rule == "name-asked" and len(value) < 2:
                accepted = False  # `I was told I didn't need it`: the pronoun, no initial
            elif rule in ("name-greeting", "name-signoff", "name-asked"):
                accepted = name_shaped(value) and len(words_of(value)) <= 4 and addressed_name(value)
            elif rule == "name-role" and labels.ROLE_NOT_NAME.search(value):
                accepted = False  # `your user ID. Could you`: an abbreviation, then the next sentence
            elif rule in ("name-mail", "name-role"):
                accepted = name_shaped(value) and (any_listed(value) or len(words_of(value)) >= 2)
            else:
                accepted = name_shaped(value) and len(words_of(value)) <= 4
            if accepted:
                yield (*trim(text, *match.span(1)), rule)
