// langmem-ext admin: a little progressive enhancement; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // "Select all on this page" for the bulk delete checkboxes.
  const all = document.getElementById("select-all");
  if (all) {
    all.addEventListener("change", () => {
      document.querySelectorAll('#memories input[name="ids"]').forEach((box) => {
        box.checked = all.checked;
      });
    });
  }
  // Forms that delete or settle many items ask first.
  document.querySelectorAll("form[data-confirm]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  });
  // "/" focuses the page's filter or search box (not while typing elsewhere).
  document.addEventListener("keydown", (event) => {
    const tag = (event.target && event.target.tagName) || "";
    if (event.key !== "/" || ["INPUT", "TEXTAREA", "SELECT"].includes(tag)) return;
    const box = document.getElementById("f-q") || document.getElementById("search-q");
    if (box) { event.preventDefault(); box.focus(); }
  });
  // After an action, move focus to its message so screen readers and keyboards land there.
  const flash = document.getElementById("flash");
  if (flash) { flash.tabIndex = -1; flash.focus(); }
});
