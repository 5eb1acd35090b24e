/* Keyboard shortcuts of the annotator and adjudicator pages (the forms marked data-hotkeys).
 *
 * Digits (and, for a study's own codebook, letters) tick the radio button or toggle the tick box
 * whose <label data-hotkey="N"> shows that key; Ctrl+Enter or
 * Cmd+Enter submits with the button marked data-hotkey-submit ("Save and next item"); "s"
 * presses the button marked data-hotkey-skip. Digits and "s" are ignored while the focus is
 * in a text field, so notes and new tags can be typed; Ctrl/Cmd+Enter works everywhere.
 * The pages work without this file; it also moves the focus to an error summary or a
 * conflict warning, so that a screen reader announces it and Tab reaches its links first.
 *
 * A field that gets the focus is scrolled clear of the form's sticky save bar (WCAG 2.4.11):
 * the browser scrolls a focused field into view without knowing about the bar, and where the
 * page itself can scroll no further it leaves the field under it (found by a try-out).
 */
(function () {
  "use strict";
  var notice = document.getElementById("error-summary") || document.getElementById("conflict");
  if (notice) { notice.focus(); }

  var form = document.querySelector("form[data-hotkeys]");
  if (!form) { return; }

  function typing(el) {
    if (!el) { return false; }
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") { return true; }
    return el.tagName === "INPUT" && !/^(radio|checkbox|button|submit|reset|hidden)$/.test(el.type);
  }

  function press(button) {
    if (!button) { return; }
    if (form.requestSubmit) { form.requestSubmit(button); } else { button.click(); }
  }

  var bar = form.querySelector(".actions");
  function scroller(el) {
    for (var box = el.parentElement; box; box = box.parentElement) {
      var overflow = getComputedStyle(box).overflowY;
      if ((overflow === "auto" || overflow === "scroll") && box.scrollHeight > box.clientHeight) { return box; }
    }
    return document.scrollingElement || document.documentElement;
  }
  form.addEventListener("focusin", function (event) {
    var el = event.target;
    if (!bar || bar.contains(el)) { return; }
    // After the browser's own scrolling; a tick box's or radio button's label is what shows.
    window.requestAnimationFrame(function () {
      var shown = (el.labels && el.labels.length && /^(checkbox|radio)$/.test(el.type)) ? el.labels[0] : el;
      var under = shown.getBoundingClientRect().bottom - bar.getBoundingClientRect().top;
      if (under > 0 && shown.getBoundingClientRect().top < bar.getBoundingClientRect().bottom) {
        scroller(el).scrollBy(0, under + 8);
      }
    });
  });

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.isComposing) { return; }
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      press(form.querySelector("[data-hotkey-submit]"));
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat || typing(event.target)) { return; }
    // A study's own codebook gives letters too (annotation/codebook_form.py); "s" stays skip.
    var key = event.key.length === 1 ? event.key.toLowerCase() : "";
    if (/^[0-9a-z]$/.test(key) && key !== "s") {
      var label = form.querySelector('label[data-hotkey="' + key + '"]');
      var input = label && document.getElementById(label.htmlFor);
      if (input) {
        event.preventDefault();
        input.checked = input.type === "checkbox" ? !input.checked : true;
        input.focus();
        input.dispatchEvent(new Event("change", { bubbles: true }));
      }
      return;
    }
    if (event.key === "s" || event.key === "S") {
      var skip = form.querySelector("[data-hotkey-skip]");
      if (skip) { event.preventDefault(); press(skip); }
    }
  });
})();
