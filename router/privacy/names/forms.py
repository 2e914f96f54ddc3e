"""How a person's name is written, as pieces of regular expression the rules share: a
capitalised word, particles (`van`, `de`, `bin`), honorifics, a full name of up to four words,
one with initials, a word cased as a name, and the verbs that report what a person said."""

from __future__ import annotations

import re

# A capitalised word (Latin scripts): names are runs of them.
CAPITAL = r"[A-ZÀ-ÖØ-Þ\u0100-\u017F](?:[^\W\d_]|['’](?=[^\W\d_])|-(?=[^\W\d_]))*"
PARTICLE = r"(?:van|von|der|den|de|del|della|di|da|du|la|le|bin|binti|ibn|al|el|dos|das|ten|ter|y|e)"
FULL = rf"{CAPITAL}\.?(?:[ \t]+(?:{PARTICLE}[ \t]+){{0,2}}(?:[A-Z]\.(?=[ \t]+[A-Z])|{CAPITAL})){{0,3}}"
HONORIFIC = (
    r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|Mme|Mlle|Sr|Sra|Srta|Sig|Sig\.ra|Signora|Signor|Dott|Madame|Monsieur"
    r"|Mademoiselle|Señor|Señora|Señorita|Senhor|Senhora|Pani|Fru|Mevrouw|Meneer|Paní)"
)


# The verbs that report what a person said: before a name (`…, said Maria.`) and after a name
# quoted with its role (`Ana Lima, our CTO, told us`).
REPORTING = (
    r"(?:said|says|told|asked|added|adds|wrote|writes|replied|answered|explained|noted|commented|announced"
    r"|confirmed|whispered|shouted)"
)


# A name with initials (`Ana M. Lima`, `Ana M Lima`), 1-4 words.
INITIALLED = rf"{CAPITAL}(?:[ \t]+(?:[A-Z]\.[ \t]+|(?:{PARTICLE}[ \t]+){{1,2}})?{CAPITAL}){{0,3}}"  # `van de`
# A lower-case letter of a Latin script (`žilková` as well as `smith`; written as characters, which
# hyperscan's UTF-8 mode and `re` both read).
LOWER_LETTER = "[a-zß-öø-ÿĀ-ſ]"


# A word cased as a name (`Lima`, `Anne-Marie`, `McKenzie`, `O'Brien`), not as a product (`GitHub`).
NAME_CASED = re.compile(r"(?:Mc|Mac|O['’]|D['’])?[^\W\d_][^\W\d_A-Z]*(?:-[^\W\d_][^\W\d_A-Z]*)?")
# The words of a name that are neither given nor family names: initials and particles.
JOINING = re.compile(rf"[A-Z]\.?|{PARTICLE}")
