// Revocation monitor: asks once for a token (the operator's, or an owner's grant-service
// bearer token), keeps it in this tab's sessionStorage and sends it as
// `Authorization: Bearer` — never in a URL. A snapshot comes from the JSON API, then live
// updates from the event stream (Server-Sent Events read with fetch(), since EventSource
// cannot send the header), resumed with Last-Event-ID after the snapshot's stream position.
// Every value is written with textContent: message fields are not trusted.
"use strict";

const tokenKey = "rescind.monitor.token";
const params = new URLSearchParams(location.search);
const familyMemberID = params.get("family_member_id");
const stateFilter = params.get("state");
const revocations = new Map();
// States the page highlights (the summary says which; these until it has).
let attentionStates = new Set(["overdue", "not_now"]);
// Acknowledgement states in which a revoked user's device has done its erasure.
const erasedStates = new Set(["applied", "already_applied", "healed"]);
const violations = new Map();
const maxListed = 50;

function element(tag, text, attributes) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  return node;
}

function short(id) { return id ? String(id).slice(0, 8) : "—"; }
function time(value) { return value ? new Date(value).toLocaleString() : "—"; }

function stateBadge(state) {
  return element("span", state.replace("_", " "), { class: "state state-" + state, "data-state": state });
}

// One expected device: its command's lifecycle state, the attempts (when re-issued) and, folded,
// its history (issued, receipts, answers, overdue, re-issues), oldest first.
function deviceLifecycle(device) {
  const item = element("li", null, { "data-device-id": device.device_id, "data-state": device.state });
  const attempts = device.attempts > 1 ? ", attempt " + device.attempts : "";
  item.append(stateBadge(device.state), " ",
    element("code", short(device.device_id), { title: device.device_id }),
    " " + device.action.replace("_", " ") + attempts + (device.late ? " (late)" : ""));
  const steps = device.history || [];
  if (steps.length > 0) {
    const history = element("details", null, { class: "history" });
    history.append(element("summary", "history"));
    const list = element("ol");
    for (const step of steps) {
      list.append(element("li",
        time(step.at) + " " + step.state.replace("_", " ") + (step.attempt > 1 ? " (attempt " + step.attempt + ")" : "") +
          (step.error ? " — " + step.error : ""),
        { "data-state": step.state }));
    }
    history.append(list);
    item.append(history);
  }
  return item;
}

function revocationRow(revocation) {
  const state = revocation.completed_at ? "completed" : "open";
  const row = element("tr", null, { "data-event-id": revocation.event_id, "data-state": state });
  row.append(
    element("td", null), element("td", short(revocation.family_member_id)),
    element("td", short(revocation.revoked_user_id)), element("td", time(revocation.committed_at)),
    element("td", null),
    element("td", revocation.commit_to_last_ack_ms == null ? "—" : revocation.commit_to_last_ack_ms + " ms",
      { class: "timing" }),
    element("td", null));
  row.cells[0].append(element("code", short(revocation.event_id), { title: revocation.event_id }));
  row.cells[4].append(stateBadge(state));
  const devices = element("ul", null, { class: "devices" });
  for (const device of revocation.devices) devices.append(deviceLifecycle(device));
  row.cells[6].append(devices);
  markAttention(row);
  row.append(exposureCell(revocation));
  return row;
}

// Not-now and overdue devices, and their rows, stand out.
function markAttention(row) {
  let attention = false;
  for (const item of row.querySelectorAll("li[data-device-id]")) {
    if (!attentionStates.has(item.dataset.state)) continue;
    item.classList.add("attention");
    attention = true;
  }
  row.classList.toggle("attention", attention);
  row.dataset.attention = attention ? "true" : "false";
}

// The revoked user's devices: which erased, which never acknowledged. What each had fetched
// is sealed to the owner by the grant service: `rescind revocation E --exposure` opens it.
function exposureCell(revocation) {
  const deleting = revocation.devices.filter((device) => device.action === "secure_deletion");
  const erased = deleting.filter((device) => erasedStates.has(device.state));
  const waiting = deleting.length - erased.length;
  const cell = element("td", null, {
    class: "exposure", "data-erased": erased.length, "data-unacknowledged": waiting,
  });
  if (deleting.length === 0) {
    cell.append(element("span", "no device of the revoked user to erase"));
    return cell;
  }
  cell.append(element("div", erased.length + " of " + deleting.length + " of the revoked user's devices erased"));
  if (waiting > 0) {
    cell.append(element("div", waiting + " never acknowledged: may still hold ciphertext and the old key",
      { class: "holding" }));
  }
  cell.append(element("div", "records fetched, per device: sealed to the owner — "),
    element("code", "rescind revocation " + revocation.event_id + " --exposure"));
  return cell;
}

// The filter on a device state: a revocation is listed while one of its devices is in it.
function matchesFilter(revocation) {
  return !stateFilter || revocation.devices.some((device) => device.state === stateFilter);
}

function filterQuery(withState) {
  const query = new URLSearchParams();
  if (familyMemberID) query.set("family_member_id", familyMemberID);
  if (withState && stateFilter) query.set("state", stateFilter);
  const text = query.toString();
  return text ? "?" + text : "";
}

function renderCounts(summary) {
  attentionStates = new Set(summary.states.filter((entry) => entry.attention).map((entry) => entry.state));
  const select = document.getElementById("state-filter");
  const listed = new Set([...select.options].map((option) => option.value));
  const items = summary.states.map((entry) => {
    if (!listed.has(entry.state)) select.append(element("option", entry.state.replace("_", " "), { value: entry.state }));
    const link = new URLSearchParams();
    link.set("state", entry.state);
    if (familyMemberID) link.set("family_member_id", familyMemberID);
    const item = element("li", null, {
      class: "count state-" + entry.state + (entry.attention ? " attention" : "") +
        (entry.state === stateFilter ? " selected" : ""),
      "data-state": entry.state, "data-count": entry.count,
    });
    item.append(element("a", entry.state.replace("_", " ") + ": " + entry.count, { href: "?" + link.toString() }));
    return item;
  });
  document.getElementById("state-counts").replaceChildren(...items);
  const times = summary.ack_times;
  document.getElementById("ack-summary").textContent = times.completed === 0
    ? "No completed revocation yet."
    : times.completed + " completed; p50 " + times.p50_ms + " ms, p99 " + times.p99_ms + " ms";
}

// The plot is SVG the service draws; parsed as SVG (never as HTML) and adopted into the page.
function renderPlot(text) {
  const parsed = new DOMParser().parseFromString(text, "image/svg+xml");
  const root = parsed.documentElement;
  if (root.nodeName !== "svg") return;
  document.getElementById("plot").replaceChildren(document.importNode(root, true));
}

async function refreshSummary() {
  const [summary, plot] = await Promise.all([
    api("v1/monitoring/summary" + filterQuery(false)),
    apiText("v1/monitoring/ack-times.svg" + filterQuery(false)),
  ]);
  renderCounts(summary);
  renderPlot(plot);
  renderRevocations();
}

let summaryTimer = null;
function scheduleSummary() {
  if (summaryTimer) return;
  summaryTimer = setTimeout(() => {
    summaryTimer = null;
    refreshSummary().catch(() => {});
  }, 300);
}

function renderRevocations() {
  const body = document.getElementById("revocations");
  const sorted = [...revocations.values()].sort((a, b) => b.committed_at.localeCompare(a.committed_at));
  body.replaceChildren(...sorted.slice(0, maxListed).map(revocationRow));
  if (sorted.length === 0) body.append(element("tr", null, { class: "empty" }));
}

// A key chain violation an honest client reported (newest first): who, what, why.
function violationRow(record) {
  const violation = record.violation;
  const row = element("tr", null, {
    class: "violation", "data-report-id": violation.report_id, "data-code": violation.code,
    "data-verification": record.verification,
  });
  row.append(
    element("td", time(record.received_at)), element("td", null), element("td", null),
    element("td", violation.code.replaceAll("_", " "), { class: "code" }),
    element("td", violation.detail, { class: "detail" }), element("td", time(violation.detected_at)),
    element("td", record.verification.replaceAll("_", " "), { class: "verification-" + record.verification }));
  row.cells[1].append(element("code", short(violation.family_member_id), { title: violation.family_member_id }));
  row.cells[2].append(element("code", short(violation.reporter_device_id), { title: violation.reporter_device_id }),
    " of user ", element("code", short(violation.reporter_user_id), { title: violation.reporter_user_id }));
  return row;
}

function renderViolations() {
  const body = document.getElementById("violations");
  const sorted = [...violations.values()].sort((a, b) =>
    b.received_at.localeCompare(a.received_at) || b.violation.detected_at.localeCompare(a.violation.detected_at));
  body.replaceChildren(...sorted.slice(0, maxListed).map(violationRow));
  if (sorted.length === 0) body.append(element("tr", null, { class: "empty" }));
}

function addViolation(record) {
  if (familyMemberID && record.violation.family_member_id !== familyMemberID) return;
  violations.set(record.violation.report_id, record);
  renderViolations();
}

function prepend(listID, item) {
  const list = document.getElementById(listID);
  list.querySelectorAll(".empty").forEach((node) => node.remove());
  list.prepend(item);
  while (list.children.length > maxListed) list.lastChild.remove();
}

function showAlert(notification) {
  prepend("alerts", element("li",
    "Device " + short(notification.device_id) + " has not acknowledged revocation " + short(notification.event_id) +
    " (deadline " + time(notification.deadline) + ")",
    { class: "alert", "data-event-id": notification.event_id, "data-device-id": notification.device_id }));
}

// A governance notice: a pending change is what the people watching act on (it can still be
// vetoed); a decided one closes it.
function showGovernance(notice) {
  const subject = notice.operation_id ? "operation " + short(notice.operation_id)
    : "device " + short(notice.subject_device_id);
  const actor = notice.actor_device_id ? "device " + short(notice.actor_device_id)
    : (notice.decided_by === "delay" ? "the security delay" : "the recovery key");
  const text = time(notice.occurred_at) + " · user " + short(notice.user_id) + " · " + notice.change.replace("_", " ") +
    " · " + subject + " · " + notice.state + " (" + actor + ")" +
    (notice.state === "pending" ? " · takes effect " + time(notice.effective_at) + " unless vetoed" : "");
  prepend("governance", element("li", text,
    { class: "governance governance-" + notice.state, "data-state": notice.state, "data-change": notice.change }));
}

function showRejection(rejection, receivedAt) {
  prepend("rejections", element("li",
    time(receivedAt) + " · " + rejection.reason + " · " + rejection.topic + "[" + rejection.partition + "]@" +
    rejection.offset + (rejection.signer ? " · claimed signer " + rejection.signer : ""),
    { class: "rejection", "data-reason": rejection.reason }));
}

function setConnection(state, text) {
  const node = document.getElementById("connection");
  node.dataset.state = state;
  node.textContent = text;
}

class Refused extends Error {}

let following = null;

function token() { return sessionStorage.getItem(tokenKey); }

function authorized(extra) {
  return Object.assign({ Authorization: "Bearer " + token() }, extra || {});
}

async function apiText(path) {
  const response = await fetch(path, { headers: authorized(), cache: "no-store", credentials: "omit" });
  if (response.status === 401) throw new Refused("refused");
  if (!response.ok) throw new Error("answered " + response.status);
  return response.text();
}

async function api(path) {
  const response = await fetch(path, { headers: authorized(), cache: "no-store", credentials: "omit" });
  if (response.status === 401) throw new Refused("refused");
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error((body && body.error && body.error.message) || "answered " + response.status);
  return body;
}

function showSignIn(message) {
  if (following) following.abort();
  following = null;
  document.getElementById("monitor").hidden = true;
  const form = document.getElementById("signin");
  form.hidden = false;
  form.dataset.state = message ? "refused" : "signed-out";
  document.getElementById("signin-error").textContent = message || "";
  document.body.dataset.auth = message ? "refused" : "signed-out";
  document.getElementById("token").focus();
}

async function signIn(candidate) {
  sessionStorage.setItem(tokenKey, candidate);
  let credential;
  try {
    credential = await api("v1/monitoring/credential");
  } catch (error) {
    sessionStorage.removeItem(tokenKey);
    showSignIn(error instanceof Refused ? "That token was refused." : "Sign-in failed: " + error.message);
    return;
  }
  document.getElementById("signin").hidden = true;
  document.getElementById("monitor").hidden = false;
  document.body.dataset.auth = "signed-in";
  document.body.dataset.scope = credential.scope;
  document.getElementById("whoami").textContent = credential.scope === "operator"
    ? "Signed in as the operator: every family member."
    : "Signed in as owner " + short(credential.user_id) + ": your family members only.";
  document.getElementById("rejections-section").hidden = credential.scope !== "operator";
  try {
    await start(credential);
  } catch (error) {
    if (error instanceof Refused) showSignIn("The token was refused; sign in again.");
    else setConnection("failed", "failed to load: " + error.message);
  }
}

function signOut() {
  sessionStorage.removeItem(tokenKey);
  revocations.clear();
  renderRevocations();
  violations.clear();
  renderViolations();
  showSignIn("");
}

async function start(credential) {
  document.getElementById("state-filter").value = stateFilter || "";
  document.getElementById("family-filter").value = familyMemberID || "";
  const query = filterQuery(true);
  const [snapshot, , rejected, reported, governance] = await Promise.all([
    api("v1/revocations" + query),
    refreshSummary(),
    credential.scope === "operator" ? api("v1/rejections") : Promise.resolve({ rejections: [], counts: [] }),
    api("v1/key-chain-violations" + filterQuery(false)),
    api("v1/governance-notices"),
  ]);
  document.getElementById("governance").replaceChildren(element("li", "none", { class: "empty" }));
  for (const notice of governance.notices.reverse()) showGovernance(notice);
  violations.clear();
  for (const record of reported.violations) addViolation(record);
  renderViolations();
  revocations.clear();
  for (const revocation of snapshot.revocations) revocations.set(revocation.event_id, revocation);
  renderRevocations();
  for (const rejection of rejected.rejections.reverse()) showRejection(rejection, rejection.received_at);
  // Every rejection is counted; beyond each hour's stored rows they are not listed.
  document.getElementById("rejection-counts").textContent = (rejected.counts || []).length === 0 ? "" :
    "Last 24 h: " + rejected.counts.map(count =>
      count.reason + " " + count.rejected + (count.stored < count.rejected ? " (" + count.stored + " kept)" : "") +
      " on " + count.topic).join(" · ");
  follow(snapshot.stream_position);
}

function dispatch(event) {
  if (event.type === "revocation") {
    const revocation = JSON.parse(event.data);
    if (matchesFilter(revocation)) revocations.set(revocation.event_id, revocation);
    else revocations.delete(revocation.event_id);
    renderRevocations();
    scheduleSummary();
  } else if (event.type === "notification") {
    const notification = JSON.parse(event.data);
    if (notification.kind === "ack_overdue") {
      showAlert(notification);
      scheduleSummary();
    }
    if (notification.kind === "governance_notice") showGovernance(notification.governance);
    if (notification.kind === "message_rejected") showRejection(notification.rejection, notification.occurred_at);
    if (notification.kind === "key_chain_violation") {
      addViolation({
        violation: notification.violation, verification: notification.reporter_verification,
        received_at: notification.occurred_at,
      });
    }
  }
}

// One block of the text/event-stream format (fields id, event, data; comments skipped).
function parseBlock(block) {
  const event = { id: null, type: "message", data: null };
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") event.id = value;
    else if (field === "event") event.type = value;
    else if (field === "data") event.data = event.data === null ? value : event.data + "\n" + value;
  }
  return event.data === null ? null : event;
}

// Reads the stream with fetch(); on a drop, reconnects with the last id seen.
async function follow(position) {
  const controller = new AbortController();
  if (following) following.abort();
  following = controller;
  let lastID = String(position);
  const streamQuery = familyMemberID ? "?family_member_id=" + encodeURIComponent(familyMemberID) : "";
  while (!controller.signal.aborted) {
    try {
      const response = await fetch("v1/events" + streamQuery, {
        headers: authorized({ Accept: "text/event-stream", "Last-Event-ID": lastID }),
        cache: "no-store", credentials: "omit", signal: controller.signal,
      });
      if (response.status === 401) {
        showSignIn("The token was refused; sign in again.");
        return;
      }
      if (!response.ok || !response.body) throw new Error("the stream answered " + response.status);
      setConnection("live", "live");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n?/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = parseBlock(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (!event) continue;
          if (event.id !== null) lastID = event.id;
          dispatch(event);
        }
      }
    } catch (error) {
      if (controller.signal.aborted) return;
    }
    if (controller.signal.aborted) return;
    setConnection("reconnecting", "reconnecting…");
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

document.getElementById("signin").addEventListener("submit", (event) => {
  event.preventDefault();
  const field = document.getElementById("token");
  const candidate = field.value.trim();
  field.value = "";
  if (candidate) signIn(candidate);
});
document.getElementById("signout").addEventListener("click", signOut);

if (token()) signIn(token());
else showSignIn("");
