"""bench/profile_wsgi.py's measure of the time SQLite's write lock is held: each transaction
counted from its BEGIN to its commit or rollback, on a real database."""
import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from bench.profile_wsgi import WriteTransactionTimer


@pytest.mark.django_db(transaction=True)
def test_each_write_transaction_is_timed_to_its_commit_or_rollback():
    if connection.vendor != "sqlite":
        pytest.skip("the timer measures SQLite's BEGIN IMMEDIATE transactions")
    timer = WriteTransactionTimer(connection)
    try:
        with transaction.atomic():
            User.objects.create(username="committed")
        with pytest.raises(RuntimeError), transaction.atomic():
            User.objects.create(username="rolled-back")
            raise RuntimeError("refused")
        with transaction.atomic(), transaction.atomic():  # the inner one is a savepoint
            User.objects.create(username="nested")
        User.objects.create(username="autocommit")  # no transaction of Django's
    finally:
        timer.remove()
    assert timer.transactions == 3
    assert timer.seconds > 0
    with transaction.atomic():  # removed: no longer counted
        User.objects.create(username="after")
    assert timer.transactions == 3
    assert sorted(User.objects.values_list("username", flat=True)) == ["after", "autocommit", "committed", "nested"]
