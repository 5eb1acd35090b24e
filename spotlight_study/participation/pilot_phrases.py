"""What simulated pilot participants write, in the study's language (pure data, no Django).

A pilot of a German study answered in English, so its answers read like nothing a real
participant of that study would write, and the annotation pilot and the report were run on
English text. The phrases below exist in every language the platform ships
(:data:`spotlight_study.studies.languages.SHIPPED_LANGUAGES`: en, de, es, fr); a study in another
language gets the English ones. Each table has the same number of entries in every language and
they are drawn in the same way (:mod:`.pilot_behaviour`), so a seed picks the same kind of answer
whatever the language, and an English study's pilot is unchanged.

Placeholders: ``{g}`` the group with more of the pattern, ``{o}`` the other group, ``{tokens}``
the pattern's tokens as quoted and joined by :func:`tokens_phrase`, ``{keyword}`` a keyword of
the instruction check.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PilotPhrases:
    """The phrase tables of one language (see the module docstring for the placeholders)."""

    identifying: tuple[str, ...]
    not_identifying: tuple[str, ...]
    endings: tuple[str, ...]
    failing_training: tuple[str, ...]
    naming_keyword: str
    comments: tuple[str, ...]
    and_word: str


ENGLISH = PilotPhrases(
    identifying=(
        "Group {g} uses {tokens} much more often than group {o}.",
        "The texts in group {g} keep mentioning {tokens}; group {o} hardly does.",
        "Main difference: group {g} has {tokens} far more often.",
        "In group {g} I noticed {tokens} again and again, less so in group {o}. "
        "Otherwise they look alike.",
        "Group {o} rarely has {tokens}, while most texts of group {g} do.",
    ),
    not_identifying=(
        "Group 1 texts are a bit longer and more detailed than group 2.",
        "Group 2 sounds more formal to me.",
        "I could not find a clear difference between the two groups.",
        "Group 1 uses more numbers and lists.",
        "The tone of group 2 is friendlier and more personal.",
        "Both groups say much the same thing; group 2 has shorter sentences.",
        "Group 1 seems more positive overall, group 2 more neutral.",
    ),
    endings=("", " That is what stood out.", " Not fully sure, though.", " It was easy to see.",
             " Took me a while."),
    failing_training=(
        "I did not see any difference.",
        "The texts in group 1 are longer.",
        "Group 2 seems more cheerful.",
        "Both groups look the same to me.",
    ),
    naming_keyword="One group talks about {keyword} a lot, the other does not.",
    comments=("", "", "", "The texts were long but fine.", "Interesting task.",
              "The second setting was harder."),
    and_word="and",
)

GERMAN = PilotPhrases(
    identifying=(
        "Gruppe {g} verwendet {tokens} viel häufiger als Gruppe {o}.",
        "Die Texte in Gruppe {g} erwähnen immer wieder {tokens}; Gruppe {o} kaum.",
        "Hauptunterschied: Gruppe {g} enthält {tokens} weitaus öfter.",
        "In Gruppe {g} ist mir {tokens} immer wieder aufgefallen, in Gruppe {o} weniger. "
        "Sonst ähneln sie sich.",
        "Gruppe {o} enthält selten {tokens}, die meisten Texte von Gruppe {g} dagegen schon.",
    ),
    not_identifying=(
        "Die Texte von Gruppe 1 sind etwas länger und ausführlicher als die von Gruppe 2.",
        "Gruppe 2 klingt für mich förmlicher.",
        "Ich konnte keinen klaren Unterschied zwischen den beiden Gruppen finden.",
        "Gruppe 1 verwendet mehr Zahlen und Aufzählungen.",
        "Der Ton von Gruppe 2 ist freundlicher und persönlicher.",
        "Beide Gruppen sagen ungefähr dasselbe; Gruppe 2 hat kürzere Sätze.",
        "Gruppe 1 wirkt insgesamt positiver, Gruppe 2 neutraler.",
    ),
    endings=("", " Das ist mir aufgefallen.", " Ganz sicher bin ich mir aber nicht.",
             " Es war leicht zu sehen.", " Das hat eine Weile gedauert."),
    failing_training=(
        "Ich habe zwischen den Gruppen keinen Unterschied gesehen.",
        "Die Texte in Gruppe 1 sind länger.",
        "Gruppe 2 wirkt fröhlicher.",
        "Beide Gruppen sehen für mich gleich aus.",
    ),
    naming_keyword="Eine Gruppe spricht viel über {keyword}, die andere Gruppe nicht.",
    comments=("", "", "", "Die Texte waren lang, aber in Ordnung.", "Interessante Aufgabe.",
              "Der zweite Teil war schwieriger."),
    and_word="und",
)

SPANISH = PilotPhrases(
    identifying=(
        "El grupo {g} usa {tokens} mucho más a menudo que el grupo {o}.",
        "Los textos del grupo {g} mencionan {tokens} una y otra vez; el grupo {o} casi nunca.",
        "Diferencia principal: el grupo {g} tiene {tokens} con mucha más frecuencia.",
        "En el grupo {g} noté {tokens} una y otra vez, menos en el grupo {o}. "
        "Por lo demás se parecen.",
        "El grupo {o} rara vez tiene {tokens}, mientras que la mayoría de los textos del grupo {g} sí.",
    ),
    not_identifying=(
        "Los textos del grupo 1 son algo más largos y detallados que los del grupo 2.",
        "El grupo 2 me suena más formal.",
        "No pude encontrar una diferencia clara entre los dos grupos.",
        "El grupo 1 usa más números y listas.",
        "El tono del grupo 2 es más amable y personal.",
        "Ambos grupos dicen casi lo mismo; el grupo 2 tiene frases más cortas.",
        "El grupo 1 parece más positivo en general, el grupo 2 más neutral.",
    ),
    endings=("", " Eso es lo que me llamó la atención.", " Aunque no estoy del todo seguro.",
             " Era fácil de ver.", " Me llevó un rato."),
    failing_training=(
        "No vi ninguna diferencia entre los grupos.",
        "Los textos del grupo 1 son más largos.",
        "El grupo 2 parece más alegre.",
        "Los dos grupos me parecen iguales.",
    ),
    naming_keyword="Un grupo habla mucho de {keyword} y el otro grupo no.",
    comments=("", "", "", "Los textos eran largos, pero bien.", "Tarea interesante.",
              "La segunda parte fue más difícil."),
    and_word="y",
)

FRENCH = PilotPhrases(
    identifying=(
        "Le groupe {g} utilise {tokens} beaucoup plus souvent que le groupe {o}.",
        "Les textes du groupe {g} mentionnent sans cesse {tokens} ; le groupe {o} presque jamais.",
        "Différence principale : le groupe {g} contient {tokens} bien plus souvent.",
        "Dans le groupe {g}, j'ai remarqué {tokens} encore et encore, moins dans le groupe {o}. "
        "Sinon, ils se ressemblent.",
        "Le groupe {o} contient rarement {tokens}, alors que la plupart des textes du groupe {g} oui.",
    ),
    not_identifying=(
        "Les textes du groupe 1 sont un peu plus longs et détaillés que ceux du groupe 2.",
        "Le groupe 2 me paraît plus formel.",
        "Je n'ai pas trouvé de différence nette entre les deux groupes.",
        "Le groupe 1 utilise plus de chiffres et de listes.",
        "Le ton du groupe 2 est plus aimable et personnel.",
        "Les deux groupes disent à peu près la même chose ; le groupe 2 a des phrases plus courtes.",
        "Le groupe 1 semble plus positif dans l'ensemble, le groupe 2 plus neutre.",
    ),
    endings=("", " C'est ce qui m'a frappé.", " Je n'en suis pas tout à fait sûr.",
             " C'était facile à voir.", " Cela m'a pris un moment."),
    failing_training=(
        "Je n'ai vu aucune différence entre les groupes.",
        "Les textes du groupe 1 sont plus longs.",
        "Le groupe 2 semble plus joyeux.",
        "Les deux groupes me semblent identiques.",
    ),
    naming_keyword="Un groupe parle beaucoup de {keyword}, l'autre groupe non.",
    comments=("", "", "", "Les textes étaient longs, mais ça allait.", "Tâche intéressante.",
              "La deuxième partie était plus difficile."),
    and_word="et",
)

#: The phrases per language code; :func:`pilot_phrases` falls back to English.
PHRASES = {"en": ENGLISH, "de": GERMAN, "es": SPANISH, "fr": FRENCH}


def pilot_phrases(language: str | None) -> PilotPhrases:
    """The phrase tables of ``language`` (``"de"``, ``"pt-br"`` -> its base ``"pt"``), English
    for a language without them."""
    code = (language or "en").lower()
    return PHRASES.get(code) or PHRASES.get(code.split("-")[0]) or ENGLISH


def tokens_phrase(tokens: list[str], language: str | None = "en") -> str:
    """A pattern's tokens as a participant writes them: ``"maize" and "beans"`` (German
    ``"maize" und "beans"``)."""
    quoted = [f'"{t}"' for t in tokens]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + f" {pilot_phrases(language).and_word} " + quoted[-1]
