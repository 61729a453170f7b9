// The double-click story of the design notes, in the browser. Plain JavaScript, no build.
'use strict';

const $ = (id) => document.getElementById(id);
let accountId = null;

function authorization() {
  return 'Basic ' + btoa($('user').value + ':' + $('password').value);
}

function newKey() {
  return (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random()).toString();
}

async function call(method, path, { body, key, headers } = {}) {
  const all = { Authorization: authorization(), ...(headers || {}) };
  if (body !== undefined) all['Content-Type'] = 'application/json';
  if (key) all['Idempotency-Key'] = key;
  const response = await fetch(path, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, replayed: response.headers.get('Idempotent-Replayed'), text };
}

function show(label, result) {
  const row = document.createElement('tr');
  row.innerHTML = '<td></td><td></td><td></td><td class="body"></td>';
  row.children[0].textContent = label;
  row.children[1].textContent = result.status;
  row.children[2].textContent = result.replayed || '';
  row.children[3].textContent = result.text;
  row.dataset.status = result.status;
  row.dataset.replayed = result.replayed || '';
  $('results').appendChild(row);
}

async function refreshBalance() {
  $('balance').innerHTML = '';
  const account = await call('GET', '/accounts/' + accountId);
  const list = await call('GET', '/payments?accountId=' + accountId);
  if (account.status !== 200 || list.status !== 200) {
    $('balance').textContent = 'Could not read the balance: ' + account.status + ' / ' + list.status;
    return;
  }
  const balance = JSON.parse(account.text);
  const payments = JSON.parse(list.text);
  const text = document.createElement('span');
  text.className = 'ok';
  text.id = 'balance-value';
  text.dataset.balance = balance.balance;
  text.dataset.payments = payments.length;
  text.textContent = `Balance ${(balance.balance / 100).toFixed(2)} ${balance.currency} after ${payments.length} payment(s).`;
  $('balance').appendChild(text);
}

// Runs one action of the page at a time. The demo's own buttons must not be clicked twice
// while an action runs: each click picks a new key, so a second click would be a second
// payment, not a retry of the first.
async function exclusively(action) {
  $('open-account').disabled = true;
  $('pay').disabled = true;
  try {
    await action();
  }
  catch (error) {
    $('balance').textContent = 'The request failed: ' + error;
  }
  finally {
    $('open-account').disabled = false;
    $('pay').disabled = accountId === null;
  }
}

async function openAccount() {
  const result = await call('POST', '/accounts', { key: newKey(), body: { currency: 'EUR', initialBalance: 10000 } });
  if (result.status !== 201) {
    $('account').textContent = 'Could not open an account: ' + result.status + ' ' + result.text;
    return;
  }
  accountId = JSON.parse(result.text).id;
  $('account').textContent = 'Account ' + accountId + ' opened with 100.00 EUR.';
  $('account').dataset.id = accountId;
  await refreshBalance();
}

async function pay() {
  const key = newKey();
  const body = { accountId, amount: Number($('amount').value), currency: 'EUR', description: $('description').value };
  $('results').innerHTML = '';
  $('balance').innerHTML = '';
  if ($('network-retry').checked) {
    // the first request is slow (4 s at the gateway); a second later the client gives up
    // waiting and retries with the same key. The retry waits for the policy's
    // in-flight-wait (1 s), then gets 409 because the first request is still running.
    // (The second's head start and the gateway's 4 s leave the story room on a busy
    // machine: the first request may reach the server late, and the retry too.)
    const first = call('POST', '/payments', { key, body, headers: { 'Demo-Gateway-Delay-Ms': '4000' } });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    show('retry while in flight', await call('POST', '/payments', { key, body }));
    show('first request', await first);
    show('retry after completion', await call('POST', '/payments', { key, body }));
  }
  else {
    // a double click: two identical requests at once
    const [a, b] = await Promise.all([call('POST', '/payments', { key, body }), call('POST', '/payments', { key, body })]);
    show('click 1', a);
    show('click 2', b);
    show('retry', await call('POST', '/payments', { key, body }));
  }
  await refreshBalance();
}

$('open-account').addEventListener('click', () => exclusively(openAccount));
$('pay').addEventListener('click', () => exclusively(pay));
