"""Names in other languages' sentences and forms (German, French, Spanish, Italian, Portuguese,
Dutch, Polish, Swedish, Czech), written after the detectors and scored blind once.

The other names sets are English but for their names. Agents read mail, tickets and records in
the languages their users write: a self-introduction (`Ich heiße …`, `Je m'appelle …`, `Me llamo
…`), a contact person named by the form (`Ansprechpartner:`, `Interlocuteur :`, `Persona de
contacto:`, `Referente:`), a letter's salutation and closing (`Sehr geehrter Herr …`, `Mit
freundlichen Grüßen`, `Cordialement`, `Atentamente`, `Distinti saluti`, `Met vriendelijke
groet`, `Z poważaniem`, `Med vänliga hälsningar`, `S pozdravem`), a hand-off (`zugewiesen an`,
`assigné à`, `asignado a`), a quotation's speaker (`sagte …`, `a déclaré …`), family (`meine
Tochter …`, `mon fils …`), a patient or a client named by the role word. Names are this module's
own, of the language's culture, listed in the name lists or not; the negatives are sentences
with capitalised words that are not people (German nouns, places, firms).

Scored blind, before anything was changed for them (3 rounds): PERSON 81 of 99 (0.818), 15 false
findings (5 a round: the prose model, which learnt English, took `Ihre Nachricht`, `Valencia`,
`Politecnico di Milano` and `Kundenservice der Deutschen Bahn` for people; the closing rule took
`Ihr Kundenservice-Team`). Missed: `Interlocuteur :`, `Madame Giraudeau,`, `Pani …`, `mon fils
…`, `Meine Tochter …`, `Com os melhores cumprimentos,`, `S pozdravem`, `dott. …`, `», a déclaré
…`. Then the model reads no line with more of another language's function words than of
English's (names_model.py `_other_language`), other languages' self-introductions, contact
labels, honorifics, closings, hand-offs, reporting verbs and family words became cues
(names/), and their possessives stop words: 96 of 99, no false finding. Left: a German
sentence's verb-final hand-off (`Das Ticket wurde Lutz Ostermann zugewiesen.`), which the model
had found before it stopped reading German lines.

    python -m benchmarks.privacy.later_languages [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.privacy.later_people import Item, collector, set_main

FORMS: list[Callable[[], Item]] = []
R = random.Random(0)  # reseeded per round (`score`)

NAMES = {
    "de": (
        ["Jörg", "Ulrike", "Mechthild", "Lutz", "Anneliese", "Wolfram"],
        ["Brenninkmeyer", "Schäuble", "Hofstetter", "Kettler", "Würzbach", "Ostermann"],
    ),
    "fr": (
        ["Gwenaëlle", "Anatole", "Solène", "Thibault", "Maëlys", "Régis"],
        ["Lefebvre-Dumas", "Courtemanche", "Giraudeau", "Vautrin", "Peyrac", "Lemaire"],
    ),
    "es": (
        ["Itziar", "Fermín", "Rocío", "Baltasar", "Nerea", "Eulalio"],
        ["Echeverría", "Villalobos", "Arrieta", "Quiñones", "Sanmartín", "Ibáñez"],
    ),
    "it": (
        ["Ludovica", "Ettore", "Graziella", "Tancredi", "Ornella", "Gianmarco"],
        ["Capobianco", "Santangelo", "Bertolucci", "Zanardi", "Mancuso", "Lombardini"],
    ),
    "pt": (
        ["Joaquim", "Conceição", "Rui", "Leonor", "Anselmo", "Iracema"],
        ["Magalhães", "Figueiredo", "Sampaio", "Bettencourt", "Quaresma", "Teixeira"],
    ),
    "nl": (
        ["Geertruida", "Joost", "Femke", "Wouter", "Sanne", "Maarten"],
        ["Verhoeven", "Groenewegen", "Brouwer", "Dijkstra", "Hoogendoorn", "Bakker"],
    ),
    "pl": (
        ["Bożena", "Przemysław", "Jadwiga", "Zbigniew", "Halina", "Grzegorz"],
        ["Wiśniewska", "Krawczyk", "Szczepański", "Jabłoński", "Dąbrowska", "Zieliński"],
    ),
    "sv": (
        ["Gunilla", "Björn", "Ingegerd", "Sixten", "Margareta", "Torbjörn"],
        ["Lindqvist", "Bergström", "Sjöberg", "Håkansson", "Ekdahl", "Wallin"],
    ),
    "cs": (
        ["Jaroslava", "Bohumil", "Zdeňka", "Radomír", "Libuše", "Vojtěch"],
        ["Dvořáková", "Procházka", "Kratochvíl", "Novotná", "Šťastný", "Veselý"],
    ),
}

form = collector(FORMS)


def given(lang: str) -> str:
    return R.choice(NAMES[lang][0])


def full(lang: str) -> str:
    first, last = NAMES[lang]
    return f"{R.choice(first)} {R.choice(last)}"


def last(lang: str) -> str:
    return R.choice(NAMES[lang][1])


def one(template: str, value: str) -> Item:
    return template.format(value), [("PERSON", value)]


@form
def de_intro() -> Item:
    return one("Hallo, ich heiße {} und habe eine Frage zu meiner Rechnung.", full("de"))


@form
def de_contact() -> Item:
    return one("Ansprechpartner: {}\nTelefon intern: 4417\nAbteilung: Einkauf", full("de"))


@form
def de_letter() -> Item:
    name = last("de")
    sender = full("de")
    text = (
        f"Sehr geehrter Herr {name},\n\nvielen Dank für Ihre Nachricht. Die Lieferung erfolgt am Montag.\n\n"
        f"Mit freundlichen Grüßen\n{sender}\nKundenservice"
    )
    return text, [("PERSON", name), ("PERSON", sender)]


@form
def de_assigned() -> Item:
    return one("Das Ticket wurde {} zugewiesen.", full("de"))


@form
def de_daughter() -> Item:
    return one("Meine Tochter {} hat das Passwort vergessen.", given("de"))


@form
def fr_intro() -> Item:
    return one("Bonjour, je m'appelle {} et je n'arrive plus à me connecter.", full("fr"))


@form
def fr_contact() -> Item:
    return one("Interlocuteur : {}\nService : Comptabilité", full("fr"))


@form
def fr_letter() -> Item:
    name = last("fr")
    sender = full("fr")
    text = f"Madame {name},\n\nVeuillez trouver ci-joint la facture du mois de mars.\n\nCordialement,\n{sender}"
    return text, [("PERSON", name), ("PERSON", sender)]


@form
def fr_said() -> Item:
    return one("« Le service sera rétabli ce soir », a déclaré {}, directeur technique.", full("fr"))


@form
def fr_son() -> Item:
    return one("Mon fils {} doit être ajouté au contrat.", given("fr"))


@form
def es_intro() -> Item:
    return one("Hola, me llamo {} y necesito cambiar mi dirección de envío.", full("es"))


@form
def es_contact() -> Item:
    return one("Persona de contacto: {}\nCargo: Jefa de compras", full("es"))


@form
def es_closing() -> Item:
    sender = full("es")
    return f"Quedo a la espera de su respuesta.\n\nAtentamente,\n{sender}", [("PERSON", sender)]


@form
def es_assigned() -> Item:
    return one("La incidencia está asignada a {}.", full("es"))


@form
def it_intro() -> Item:
    return one("Buongiorno, mi chiamo {} e vorrei annullare l'ordine.", full("it"))


@form
def it_referent() -> Item:
    return one("Referente: {}\nUfficio: Acquisti", full("it"))


@form
def it_closing() -> Item:
    sender = full("it")
    return f"Resto in attesa di un vostro riscontro.\n\nDistinti saluti,\n{sender}", [("PERSON", sender)]


@form
def it_doctor() -> Item:
    return one("Il paziente è stato visitato dal dott. {} alle 10:30.", full("it"))


@form
def pt_intro() -> Item:
    return one("Olá, o meu nome é {} e não consigo aceder à minha conta.", full("pt"))


@form
def pt_closing() -> Item:
    sender = full("pt")
    return f"Fico a aguardar o vosso contacto.\n\nCom os melhores cumprimentos,\n{sender}", [("PERSON", sender)]


@form
def pt_client() -> Item:
    return one("A cliente {} pediu o reembolso da encomenda 4417.", full("pt"))


@form
def nl_intro() -> Item:
    return one("Goedemiddag, mijn naam is {} en ik heb een vraag over mijn bestelling.", full("nl"))


@form
def nl_closing() -> Item:
    sender = full("nl")
    return f"Alvast bedankt voor uw reactie.\n\nMet vriendelijke groet,\n{sender}", [("PERSON", sender)]


@form
def nl_contact() -> Item:
    return one("Contactpersoon: {}\nAfdeling: Inkoop", full("nl"))


@form
def pl_intro() -> Item:
    return one("Dzień dobry, nazywam się {} i mam problem z logowaniem.", full("pl"))


@form
def pl_closing() -> Item:
    sender = full("pl")
    return f"Proszę o informację zwrotną.\n\nZ poważaniem,\n{sender}", [("PERSON", sender)]


@form
def pl_pani() -> Item:
    return one("Pani {} prosi o kontakt telefoniczny.", full("pl"))


@form
def sv_intro() -> Item:
    return one("Hej, jag heter {} och behöver hjälp med min faktura.", full("sv"))


@form
def sv_closing() -> Item:
    sender = full("sv")
    return f"Tack på förhand.\n\nMed vänliga hälsningar,\n{sender}", [("PERSON", sender)]


@form
def cs_intro() -> Item:
    return one("Dobrý den, jmenuji se {} a potřebuji změnit heslo.", full("cs"))


@form
def cs_closing() -> Item:
    sender = full("cs")
    return f"Děkuji za odpověď.\n\nS pozdravem\n{sender}", [("PERSON", sender)]


@form
def negatives() -> Item:
    text = (
        "Die Rechnung für die Lieferung nach München liegt bei.\n"
        "Bitte wenden Sie sich an den Kundenservice der Deutschen Bahn.\n"
        "La Banque Postale a confirmé le virement vers Lyon.\n"
        "El Corte Inglés abre el domingo en Valencia.\n"
        "Il Politecnico di Milano ha pubblicato il bando.\n"
        "A Caixa Geral de Depósitos fica em Lisboa.\n"
        "De Rabobank in Utrecht is gesloten.\n"
        "Mit freundlichen Grüßen\nIhr Kundenservice-Team\n"
        "Cordialement,\nLe service client\n"
    )
    return text, []


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv)


if __name__ == "__main__":
    main()
