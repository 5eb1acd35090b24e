// Typed drafts of the participant pages. Optional for the flow (it works without JavaScript),
// and a draft is never an answer: only the page's own submit saves one.
// A form marked data-draft="<url>" (a task's answer form, the survey) sends what has been typed
// or chosen so far to that URL, as the form itself would post it (CSRF token, page token, its
// text boxes, number fields and checked radio buttons and checkboxes):
// - after a pause in typing (DELAY_MS), and
// - when the page is hidden, frozen, left, reloaded or closed (visibilitychange, freeze,
//   beforeunload, pagehide), with a request that outlives the page (fetch keepalive, else
//   sendBeacon), since a phone may discard a hidden tab without any further event.
// The server keeps the latest draft on the participant's row and renders it into the step's
// next GET: reload, Back/Forward, a second tab, the study link opened again, a discarded tab.
// Nothing is ever shown to the participant: a stale page (409), a refusal (4xx) or a network
// error only leaves the last kept draft. The form's data-draft-state says where the draft is
// ("ready", "typing", "saving", "saved", "stale", "refused", "failed"), for the browser tests.
(function () {
  "use strict";
  var form = document.querySelector("form[data-draft]");
  if (!form || !window.URLSearchParams) { return; }
  var url = form.getAttribute("data-draft");
  var DELAY_MS = 1000;
  var LEAVING_EVENTS_MAX_BYTES = 60000; // keepalive requests share a 64 KiB budget
  var timer = null;
  var sent = null; // the body of the last save sent; an unchanged form is not sent again
  var done = false; // submitted, or the page turned out to be stale: send nothing more

  function fields() {
    return form.querySelectorAll("textarea[name], input[type=radio][name], input[type=checkbox][name], input[type=number][name]");
  }
  function choosable(el) { return el.type === "radio" || el.type === "checkbox"; }
  function hidden(name) {
    var el = form.querySelector('input[type=hidden][name="' + name + '"]');
    return el ? el.value : "";
  }
  function state(value) { form.setAttribute("data-draft-state", value); }

  // The server's draft is what the page must show: after a reload or Back/Forward, undo a
  // browser's own form restoration (autocomplete="off" should prevent it), which would bring
  // back an older text than the one the server kept. A field the participant is already in
  // (typing before this file arrived) is left alone.
  var nav = window.performance && performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  if (nav && (nav.type === "reload" || nav.type === "back_forward")) {
    Array.prototype.forEach.call(fields(), function (el) {
      if (el === document.activeElement) { return; }
      if (choosable(el)) {
        el.checked = el.defaultChecked;
      } else if (el.value !== el.defaultValue) {
        el.value = el.defaultValue;
        el.dispatchEvent(new Event("input", { bubbles: true })); // e.g. flow.js's counter
      }
    });
  }

  function body() {
    var data = new URLSearchParams();
    data.append("csrfmiddlewaretoken", hidden("csrfmiddlewaretoken"));
    data.append("token", hidden("token"));
    Array.prototype.forEach.call(fields(), function (el) {
      if (!choosable(el) || el.checked) { data.append(el.name, el.value); }
    });
    return data.toString();
  }

  // What the page shows came from the server: leaving it unchanged sends nothing (and so never
  // replaces a later draft that another tab of the same page kept).
  sent = body();

  function answered(text, status) {
    if (status === 204) {
      if (text === sent && timer === null) { state("saved"); }
      return;
    }
    if (status === 409 || status === 403) { done = true; state("stale"); return; }
    if (status === 429 || status >= 500) { if (text === sent) { sent = null; } state("failed"); return; }
    state("refused"); // 400 or 413: the same body would be refused again
  }

  function beacon(text) {
    var blob = new Blob([text], { type: "application/x-www-form-urlencoded" });
    if (navigator.sendBeacon && navigator.sendBeacon(url, blob)) { return; }
    sent = null;
  }

  function send(leaving) {
    clearTimeout(timer);
    timer = null;
    if (done) { return; }
    var text = body();
    if (text === sent) { return; }
    sent = text;
    state("saving");
    if (!window.fetch) { beacon(text); return; }
    var request;
    try {
      request = fetch(url, {
        method: "POST",
        body: text,
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        credentials: "same-origin",
        redirect: "error",
        keepalive: leaving && text.length <= LEAVING_EVENTS_MAX_BYTES,
      });
    } catch (e) { // a keepalive request over the browser's budget
      beacon(text);
      return;
    }
    request.then(function (response) { answered(text, response.status); }, function () {
      if (text === sent) { sent = null; }
      if (!leaving) { state("failed"); }
    });
  }

  function later() {
    if (done) { return; }
    state("typing");
    clearTimeout(timer);
    timer = setTimeout(function () { send(false); }, DELAY_MS);
  }

  state("ready");
  form.addEventListener("input", later);
  form.addEventListener("change", later);
  form.addEventListener("submit", function () { done = true; clearTimeout(timer); timer = null; });
  function leave() { send(true); }
  document.addEventListener("visibilitychange", function () { if (document.hidden) { leave(); } });
  document.addEventListener("freeze", leave);
  window.addEventListener("beforeunload", leave);
  window.addEventListener("pagehide", leave);
})();
