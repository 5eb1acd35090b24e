/* Keyboard shortcuts of the annotator and adjudicator pages (the forms marked data-hotkeys).
 *
 * Digits (and, for a study's own codebook, letters) tick the radio button or toggle the tick box
 * whose <label data-hotkey="N"> shows that key; Ctrl+Enter or
 * Cmd+Enter submits with the button marked data-hotkey-submit ("Save and next item"); "s"
 * presses the button marked data-hotkey-skip. Digits and "s" are ignored while the focus is
 * in a text field, so notes and new tags can be typed; Ctrl/Cmd+Enter works everywhere.
 * The pages work without this file; it also moves the focus to an error summary or a
 * conflict warning, so that a screen reader announces it and Tab reaches its links first.
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
