"""``manage.py pilot_annotation SLUG --open | --close``: the pilot annotation round of a study.

Without ``--open`` or ``--close`` it says whether the round is open and how many pilot items
(pilot participants' answers, ``manage.py pilot``) it has.
"""

from django.core.management.base import BaseCommand

from spotlight_study.annotation.pilot_round import pilot_round_state
from spotlight_study.annotation.services.pilot_round import pilot_round_set
from spotlight_study.annotation.services.queue import items_sync
from spotlight_study.commands import study_for_command


class Command(BaseCommand):
    help = (
        "Open or close the pilot annotation round of a study: while it is open, annotators get "
        "the pilot participants' answers in a queue of their own, marked pilot; their labels "
        "never enter the real queues, agreement or final labels."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        action = parser.add_mutually_exclusive_group()
        action.add_argument(
            "--open", dest="open_round", action="store_true", help="Open the pilot round."
        )
        action.add_argument(
            "--close",
            dest="close_round",
            action="store_true",
            help="Close it: pilot items are no longer handed out; their labels are kept.",
        )

    def handle(self, *args, slug, open_round=False, close_round=False, **options):
        study = study_for_command(slug)
        items_sync(study=study)  # pilot answers nobody has read yet count too
        if open_round or close_round:
            changed = pilot_round_set(study=study, open_=open_round)
            word = "opened" if open_round else "closed"
            self.stdout.write(
                f"Pilot annotation round of {slug} {word}."
                if changed
                else f"The pilot annotation round of {slug} was already {word}; nothing changed."
            )
        state = pilot_round_state(study=study)
        self.stdout.write(
            f"Pilot round: {'open' if state['open'] else 'closed'}; "
            f"{state['items']} pilot item(s)."
        )
        if state["open"] and not state["items"]:
            self.stdout.write(f"No pilot answers yet: run manage.py pilot {slug} --participants N.")
