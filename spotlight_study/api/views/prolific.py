"""Prolific: the study's settings and submissions, sync, review actions and bonus payments."""
from __future__ import annotations

from functools import cached_property

from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from spotlight_study.prolific import selectors as prolific_selectors
from spotlight_study.prolific.models import BonusPayment, ProlificStudy, Submission
from spotlight_study.prolific.services import bonuses as prolific_bonuses
from spotlight_study.prolific.services import review as prolific_review
from spotlight_study.prolific.services import submissions as prolific_submissions
from spotlight_study.studies.models import Study

from .. import filters
from ..errors import NotFound, NotOnProlific
from ..serializers.prolific import (
    BonusDraftSerializer,
    BonusPaymentSerializer,
    ProlificStudySerializer,
    HeldDecisionRequestSerializer,
    HeldDecisionSerializer,
    HeldSubmissionSerializer,
    ReviewReportSerializer,
    ReviewRequestSerializer,
    SubmissionSerializer,
    SyncReportSerializer,
)
from .base import StudyScoped, error_responses


class ProlificScoped(StudyScoped):
    """Views under ``/api/studies/<slug>/prolific/``."""

    @cached_property
    def prolific_study(self) -> ProlificStudy:
        """The study's Prolific settings; a 404 ``not_on_prolific`` without them."""
        ps = prolific_selectors.prolific_study_for(self.study)
        if ps is None:
            raise NotOnProlific("This study has no Prolific settings yet.")
        return ps


@extend_schema(tags=["prolific"], responses={200: ProlificStudySerializer, **error_responses(401, 403, 404)})
class ProlificStudyView(ProlificScoped, generics.GenericAPIView):
    """The study's Prolific settings and how many submissions review would act on."""

    serializer_class = ProlificStudySerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        ps = self.prolific_study
        summary = prolific_selectors.review_summary(self.study)
        ps.to_approve, ps.held, ps.failed_checks, ps.status_counts = (
            summary["to_approve"], summary["held"], summary["failed_checks"], summary["status_counts"],
        )
        return Response(ProlificStudySerializer(ps).data)


@extend_schema(tags=["prolific"], responses={200: SubmissionSerializer(many=True), **error_responses(401, 403, 404)})
class SubmissionListView(ProlificScoped, generics.ListAPIView):
    """The study's submissions on Prolific as last synced (status, participant pseudonym, review)."""

    serializer_class = SubmissionSerializer
    filterset_class = filters.SubmissionFilter
    ordering_fields = ["status_at", "created_at", "status"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Submission.objects.none()
        return prolific_selectors.submissions_of(self.prolific_study).order_by("created_at", "pk")


@extend_schema(tags=["prolific"], request=None, responses={200: SyncReportSerializer, **error_responses(401, 403, 404, 409)})
class SyncView(ProlificScoped, generics.GenericAPIView):
    """Pull submission statuses from Prolific now (502 if Prolific fails)."""

    serializer_class = SyncReportSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def post(self, request, slug: str):
        report = prolific_submissions.submissions_sync(prolific_study_id=self.prolific_study.pk)
        return Response(SyncReportSerializer(vars(report)).data)


@extend_schema(
    tags=["prolific"],
    request=ReviewRequestSerializer,
    responses={200: ReviewReportSerializer, **error_responses(400, 401, 403, 404, 409)},
)
class ReviewView(ProlificScoped, generics.GenericAPIView):
    """A review action on the study's submissions: ``review_service`` with ``dry_run``.

    Subclasses name the service (``(*, prolific_study_id, dry_run) -> ReviewReport``) and
    document the action in their docstring, which becomes the operation's description.
    """

    serializer_class = ReviewReportSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None
    review_service = None

    def post(self, request, slug: str):
        form = ReviewRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        report = self.review_service(
            prolific_study_id=self.prolific_study.pk, dry_run=form.validated_data["dry_run"], actor=request.user
        )
        return Response(ReviewReportSerializer(vars(report)).data)


class ApproveView(ReviewView):
    """Approve in bulk the submissions of participants who completed with the check passed."""

    review_service = staticmethod(prolific_review.submissions_approve_completed)


class FailedChecksView(ReviewView):
    """Ask to return (default) or reject, per the study's setting, the failed instruction checks."""

    review_service = staticmethod(prolific_review.submissions_review_failed_checks)


@extend_schema(tags=["prolific"], responses={200: HeldSubmissionSerializer(many=True), **error_responses(401, 403, 404)})
class HeldListView(ProlificScoped, generics.GenericAPIView):
    """The submissions bulk approval holds back (a holding flag or a final-label exclusion), with
    their evidence. Prolific's rule: reject only with clear evidence; prefer a return for a
    failed check."""

    serializer_class = HeldSubmissionSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        queue = prolific_selectors.review_queue(self.prolific_study)
        return Response(HeldSubmissionSerializer(queue.held, many=True).data)


@extend_schema(
    tags=["prolific"],
    request=HeldDecisionRequestSerializer,
    responses={200: HeldDecisionSerializer, **error_responses(400, 401, 403, 404, 409)},
)
class HeldDecideView(ProlificScoped, generics.GenericAPIView):
    """Approve, ask for a return of, or reject one held submission, exactly once (``confirm``
    must be true; the same decision again sends nothing; 502 ``review_send_failed`` if Prolific
    refused or did not answer)."""

    serializer_class = HeldDecisionSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def post(self, request, slug: str, submission: str):
        form = HeldDecisionRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        result = prolific_review.held_submission_decide(
            prolific_study_id=self.prolific_study.pk, submission_id=submission, action=data["action"],
            confirmed=data["confirm"], rejection_category=data["rejection_category"], message=data["message"],
            note=data["note"], decided_by=request.user, decided_via="api",
        )
        return Response(HeldDecisionSerializer({"decision": result.decision, "created": result.created}).data)


@extend_schema(tags=["prolific"])
class BonusListView(ProlificScoped, generics.ListCreateAPIView):
    """Bonus payments: list, and the dry run of a CSV (stored as a draft; nothing is sent)."""

    serializer_class = BonusPaymentSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return BonusPayment.objects.none()
        return BonusPayment.objects.filter(prolific_study=self.prolific_study).order_by("-created_at", "-pk")

    @extend_schema(
        request=BonusDraftSerializer,
        responses={201: BonusPaymentSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, *args, **kwargs):
        form = BonusDraftSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        payment = prolific_bonuses.bonus_payment_draft(
            prolific_study_id=self.prolific_study.pk, csv_text=form.validated_data["csv"], created_by=request.user
        )
        return Response(BonusPaymentSerializer(payment).data, status=status.HTTP_201_CREATED)


class _BonusScoped(ProlificScoped):
    """Views under ``.../prolific/bonuses/<pk>/``."""

    def bonus(self, pk: int) -> BonusPayment:
        """The study's bonus payment ``pk``; raises :class:`~..errors.NotFound` (404)."""
        payment = BonusPayment.objects.filter(pk=pk, prolific_study=self.prolific_study).first()
        if payment is None:
            raise NotFound(f"No bonus payment {pk}.")
        return payment


@extend_schema(tags=["prolific"], responses={200: BonusPaymentSerializer, **error_responses(401, 403, 404)})
class BonusDetailView(_BonusScoped, generics.GenericAPIView):
    """One bonus payment."""

    serializer_class = BonusPaymentSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str, pk: int):
        return Response(BonusPaymentSerializer(self.bonus(pk)).data)


@extend_schema(
    tags=["prolific"],
    request=None,
    responses={200: BonusPaymentSerializer, **error_responses(401, 403, 404, 409)},
    description="Set up the drafted bonuses on Prolific and pay them, once. A payment whose pay "
    "request was sent is never sent again (409). 502 if Prolific fails; then check on Prolific.",
)
class BonusPayView(_BonusScoped, generics.GenericAPIView):
    """Pay a drafted bonus payment (exactly once)."""

    serializer_class = BonusPaymentSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def post(self, request, slug: str, pk: int):
        payment = prolific_bonuses.bonus_payment_pay(bonus_payment_id=self.bonus(pk).pk)
        return Response(BonusPaymentSerializer(payment).data)
