// Revocation monitor: a snapshot from the JSON API, then live updates from the
// event stream (Server-Sent Events), resumed from the snapshot's stream position.
// Every value is written with textContent: message fields are not trusted.
"use strict";

const params = new URLSearchParams(location.search);
const familyMemberID = params.get("family_member_id");
const revocations = new Map();
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
  for (const device of revocation.devices) {
    const item = element("li", null, { "data-device-id": device.device_id, "data-state": device.state });
    item.append(stateBadge(device.state), " ",
      element("code", short(device.device_id), { title: device.device_id }),
      " " + device.action.replace("_", " ") + (device.late ? " (late)" : ""));
    devices.append(item);
  }
  row.cells[6].append(devices);
  return row;
}

function renderRevocations() {
  const body = document.getElementById("revocations");
  const sorted = [...revocations.values()].sort((a, b) => b.committed_at.localeCompare(a.committed_at));
  body.replaceChildren(...sorted.slice(0, maxListed).map(revocationRow));
  if (sorted.length === 0) body.append(element("tr", null, { class: "empty" }));
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

async function start() {
  const query = familyMemberID ? "?family_member_id=" + encodeURIComponent(familyMemberID) : "";
  const [snapshot, rejected] = await Promise.all([
    fetch("v1/revocations" + query).then((response) => response.json()),
    fetch("v1/rejections").then((response) => response.json()),
  ]);
  for (const revocation of snapshot.revocations) revocations.set(revocation.event_id, revocation);
  renderRevocations();
  for (const rejection of rejected.rejections.reverse()) showRejection(rejection, rejection.received_at);

  const streamQuery = new URLSearchParams({ after: String(snapshot.stream_position) });
  if (familyMemberID) streamQuery.set("family_member_id", familyMemberID);
  const stream = new EventSource("v1/events?" + streamQuery.toString());
  stream.onopen = () => setConnection("live", "live");
  stream.onerror = () => setConnection("reconnecting", "reconnecting…");
  stream.addEventListener("revocation", (event) => {
    const revocation = JSON.parse(event.data);
    revocations.set(revocation.event_id, revocation);
    renderRevocations();
  });
  stream.addEventListener("notification", (event) => {
    const notification = JSON.parse(event.data);
    if (notification.kind === "ack_overdue") showAlert(notification);
    if (notification.kind === "message_rejected") showRejection(notification.rejection, notification.occurred_at);
  });
}

start().catch((error) => setConnection("failed", "failed to load: " + error));
