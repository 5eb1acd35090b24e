"""Admin for editing study definitions."""
from django.contrib import admin

from .models import Setting, Study, TokenPattern


class SettingInline(admin.StackedInline):
    model = Setting
    extra = 0
    fields = ["key", "kind", "position", "title", "target_description", "check_keywords"]
    show_change_link = True


class TokenPatternInline(admin.TabularInline):
    model = TokenPattern
    extra = 0


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "status", "target_sample_size", "created_at"]
    list_filter = ["status"]
    search_fields = ["slug", "title"]
    inlines = [SettingInline]


@admin.register(Setting)
class SettingAdmin(admin.ModelAdmin):
    list_display = ["study", "key", "kind", "position", "title"]
    list_filter = ["study", "kind"]
    inlines = [TokenPatternInline]
