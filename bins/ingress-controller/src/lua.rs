//! The Lua that runs inside nginx (lua-nginx-module). It is fixed text written by us: nothing
//! from an object ever reaches it as code. Objects reach it only as data, the backend table
//! the controller POSTs to the control socket ([`crate::backends`]).
//!
//! - `access()` (every proxied location): answers a Gateway rule's CORS (`$gw_cors`: a
//!   preflight gets 204 here, an allowed origin's requests their `Access-Control-*` headers),
//!   then picks the backend (a Gateway rule's split: a member
//!   drawn by weight, `!500` answered 500, a named location `@…` jumped to for a backend with
//!   header edits of its own; an Ingress's canary by header, cookie, then weight),
//!   answers 503 when it has no endpoints, and picks the peer (cookie affinity,
//!   `upstream-hash-by`, else round robin). The draw uses `math.random`, seeded per worker in
//!   `init_worker()` so that workers do not all draw the same sequence.
//! - `gateway_match()` (Gateway locations whose candidates carry conditions): reads the
//!   location's candidate list from `$gw_candidates` (data written by
//!   `gateway::render`, percent-encoded; parsed once per worker and list), and jumps
//!   to the named location `@gwN` of the first candidate whose conditions all hold: method,
//!   headers (the first value of each), query parameters (the first, decoded), each exact or
//!   a regex, and the path regex (every regex anchored whole, under PCRE's match limit). None
//!   holds: 404 (S-PR.8); a regex that reaches its limit: 500.
//! - `mirror()` (the internal location of a Gateway RequestMirror's copies): draws whether
//!   this request is copied (answering 204 itself when not) and picks a peer of the mirror's
//!   backend; the copy's answer is dropped by nginx.
//! - `balance()` (the `ingress_balancer` upstream): connects to the chosen peer; when nginx
//!   passes a failed request on (`proxy_next_upstream`: a refused connection, a timeout…), to
//!   the next peer of the backend this request has not tried. It asks nginx for one more try
//!   only while such a peer remains, so `proxy_next_upstream_tries` and the number of peers
//!   both bound the tries (ingress-nginx's balancer asks for one more try on every pick and
//!   may retry the peer that just failed).
//! - `control()` (the control socket): `POST /backends` stores a new table, `GET /backends`
//!   returns it, `GET /metrics` returns the request metrics ([`crate::metrics::requests`]).
//! - `log()`: adds the request to its series (labels: the server's host, the location's
//!   Ingress, Service and path, the method, the status, the canary backend) in a table of the
//!   worker; `flush()`, every second and when the worker exits, adds those counts to the
//!   shared dict `ingress_metrics`, where `GET /metrics` reads every worker's. Every label comes from the
//!   configuration except the method (known methods, else `OTHER`) and the status (three
//!   digits), so no client can create more than a bounded number of series.
//!
//! Workers notice a new table on their next request (a version number in the shared dict).

/// The module, loaded by `init_by_lua_block` as `require("ingress")`.
pub const MODULE: &str = r#"
local M = {}
local shared = ngx.shared.ingress
-- Request metrics live in their own dict: when it fills, nginx evicts old series there,
-- never the backend table.
local counts = ngx.shared.ingress_metrics
local ngx_balancer = require("ngx.balancer")
local backends = {}
local version = -1
local counters = {}
local series = {}

local function parse(body)
  local out = {}
  for line in string.gmatch(body, "[^\n]+") do
    local name, rest = string.match(line, "^(%S+)(.*)$")
    if name then
      local b = { peers = {} }
      for k, v in string.gmatch(rest, "(%w+)=(%S*)") do
        if k == "peers" then
          for p in string.gmatch(v, "[^,]+") do b.peers[#b.peers + 1] = p end
        else
          b[k] = v
        end
      end
      if b.split then
        -- A Gateway split: members and weights, drawn from in access().
        b.members = {}
        b.total = 0
        for member, weight in string.gmatch(b.split, "([^,*]+)%*(%d+)") do
          local w = tonumber(weight) or 0
          if w > 0 then
            b.members[#b.members + 1] = { member, w }
            b.total = b.total + w
          end
        end
      end
      out[name] = b
    end
  end
  return out
end

-- The member of split `b` a request goes to, by weight; "!500" when it has none.
local function draw(b)
  if b.total <= 0 then return "!500" end
  local r = math.random(b.total)
  for _, m in ipairs(b.members) do
    r = r - m[2]
    if r <= 0 then return m[1] end
  end
  return "!500"
end

local function sync()
  local v = shared:get("version") or 0
  if v ~= version then
    backends = parse(shared:get("backends") or "")
    version = v
  end
end

local function pick(name, b, key)
  local n = #b.peers
  if key then
    return b.peers[(ngx.crc32_short(key) % n) + 1]
  end
  local i = (counters[name] or 0) % n + 1
  counters[name] = i
  return b.peers[i]
end

local function wants_canary(b)
  if b.header then
    local h = ngx.var["http_" .. b.header]
    if h then
      if b.value then
        if h == b.value then return true end
      elseif h == "always" then
        return true
      elseif h == "never" then
        return false
      end
    end
  end
  if b.cookie then
    local c = ngx.var["cookie_" .. b.cookie]
    if c == "always" then return true end
    if c == "never" then return false end
  end
  local weight = tonumber(b.weight or "0") or 0
  if weight > 0 then
    return math.random(tonumber(b.total) or 100) <= weight
  end
  return false
end

-- `parse` with its results kept per worker and text: the Gateway data (`$gw_cors`,
-- `$gw_candidates`) is parsed once, not per request. Bounded: cleared when 4096 are kept.
local function memo(parse)
  local kept, count = {}, 0
  return function(text)
    local value = kept[text]
    if not value then
      if count >= 4096 then
        kept, count = {}, 0
      end
      value = parse(text)
      kept[text] = value
      count = count + 1
    end
    return value
  end
end

local function unescape(text)
  return (string.gsub(text, "%%(%x%x)", function(hex) return string.char(tonumber(hex, 16)) end))
end

-- `scheme://host[:port]` as scheme, host and port (the scheme's when absent), lower-cased.
-- The text is a request's `Origin`: patterns that backtrack over it (`[^:/]+` before `%d*`)
-- cost the square of its length, so the host takes the rest in one step and the port is read
-- from what follows; no origin is longer than 512 bytes (a DNS name is at most 253).
local function cors_origin(text)
  if #text > 512 then return nil end
  local scheme, host, rest = string.match(text, "^(%a+)://([^:/]+)(.*)$")
  if not scheme then return nil end
  local port = (rest == "" or rest == ":") and "" or string.match(rest, "^:(%d+)$")
  if not port then return nil end
  scheme = string.lower(scheme)
  if port == "" then port = (scheme == "https") and "443" or "80" end
  return scheme, string.lower(host), port
end

-- `o=ORIGIN,...,c=1,m=METHODS,h=HEADERS,e=EXPOSED,a=SECONDS`, every value percent-encoded.
local function cors_parse(text)
  local c = { origins = {} }
  for field in string.gmatch(text, "[^,]+") do
    local k, v = string.match(field, "^(%a)=(.*)$")
    v = unescape(v or "")
    if k == "o" then
      if v == "*" then
        c.any = true
      else
        local scheme, host, port = cors_origin(v)
        if scheme then c.origins[#c.origins + 1] = { scheme, host, port } end
      end
    elseif k == "c" then
      c.credentials = true
    elseif k == "m" then
      c.methods = v
    elseif k == "h" then
      c.headers = v
    elseif k == "e" then
      c.expose = v
    elseif k == "a" then
      c.max_age = v
    end
  end
  return c
end

-- Whether the request's `origin` is one `c` allows: the same scheme and port, and the same
-- host, any host (`*`), or one that ends with `.NAME` for `*.NAME`.
local function cors_allows(c, origin)
  if c.any then return true end
  local scheme, host, port = cors_origin(origin)
  if not scheme then return false end
  for _, o in ipairs(c.origins) do
    if o[1] == scheme and o[3] == port then
      local want = o[2]
      if want == host or want == "*" then return true end
      if string.sub(want, 1, 2) == "*." then
        local suffix = string.sub(want, 2)
        if #host > #suffix and string.sub(host, -#suffix) == suffix then return true end
      end
    end
  end
  return false
end

-- A rule's CORS (S-F.7): the response headers of a request from an allowed origin; returns
-- true for a preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`), which the
-- caller answers 204 itself, allowed or not, without a backend.
local cors_parsed = memo(cors_parse)
local function cors(text)
  local c = cors_parsed(text)
  local var = ngx.var
  local origin = var.http_origin
  local method = var.http_access_control_request_method
  local preflight = origin ~= nil and method ~= nil and ngx.req.get_method() == "OPTIONS"
  if not origin or not cors_allows(c, origin) then return preflight end
  local h = ngx.header
  h["Access-Control-Allow-Origin"] = origin
  h["Vary"] = "Origin"
  if c.credentials then h["Access-Control-Allow-Credentials"] = "true" end
  if c.expose then h["Access-Control-Expose-Headers"] = c.expose end
  if not preflight then return false end
  -- With credentials a `*` is never sent: the request's own method and headers are.
  if c.methods == "*" and c.credentials then
    h["Access-Control-Allow-Methods"] = method
  elseif c.methods then
    h["Access-Control-Allow-Methods"] = c.methods
  end
  local asked = var.http_access_control_request_headers
  if c.headers == "*" and c.credentials then
    if asked then h["Access-Control-Allow-Headers"] = asked end
  elseif c.headers then
    h["Access-Control-Allow-Headers"] = c.headers
  end
  h["Access-Control-Max-Age"] = c.max_age
  return true
end

function M.access()
  sync()
  local text = ngx.var.gw_cors
  if text and text ~= "" and cors(text) then
    return ngx.exit(204)
  end
  local name = ngx.var.proxy_upstream_name
  local b = backends[name]
  if b and b.members then
    name = draw(b)
    if name == "!500" then
      return ngx.exit(500)
    end
    -- A backend with request edits of its own is served by its named location (`@…`).
    if string.byte(name, 1) == 64 then
      return ngx.exec(name)
    end
    b = backends[name]
    ngx.var.proxy_upstream_name = name
  elseif b and b.canary and backends[b.canary] and wants_canary(b) then
    name = b.canary
    b = backends[name]
    ngx.var.proxy_upstream_name = name
  end
  -- A request with mirror copies keeps its backend's name where the copies restore it from
  -- (they share its variables, and the server's `set` resets `$proxy_upstream_name`).
  if ngx.var.gw_mirror_main then ngx.var.gw_mirror_main = name end
  if not b or #b.peers == 0 then
    return ngx.exit(503)
  end
  local peer
  if b.affinity then
    local cookie = ngx.var["cookie_" .. b.affinity]
    if cookie then
      for _, p in ipairs(b.peers) do
        if tostring(ngx.crc32_short(p)) == cookie then peer = p end
      end
    end
    if not peer then
      peer = pick(name, b, nil)
      local value = b.affinity .. "=" .. ngx.crc32_short(peer) .. "; Path=" .. (b.path or "/") .. "; HttpOnly"
      if b.maxage then value = value .. "; Max-Age=" .. b.maxage end
      ngx.header["Set-Cookie"] = value
    end
  elseif b.hash then
    peer = pick(name, b, ngx.var[b.hash] or "")
  else
    peer = pick(name, b, nil)
  end
  ngx.ctx.ingress_peer = peer
  ngx.ctx.ingress_backend = b
end

-- A RequestMirror's copy (a `mirror` subrequest: it skips the access phase, so this runs
-- while rewriting): drawn by the share `$gw_mirror_sample` (`N/D`), answered 204 here when not
-- drawn; else a peer of backend `$gw_mirror_upstream` for balance(), 503 when it has none.
function M.mirror()
  sync()
  local var = ngx.var
  if var.gw_mirror_main then var.proxy_upstream_name = var.gw_mirror_main end
  local n, d = string.match(var.gw_mirror_sample or "", "^(%d+)/(%d+)$")
  n, d = tonumber(n), tonumber(d)
  if not n or not d or d < 1 or math.random(d) > n then
    return ngx.exit(204)
  end
  local name = var.gw_mirror_upstream or ""
  local b = backends[name]
  if not b or not b.peers or #b.peers == 0 then
    return ngx.exit(503)
  end
  ngx.ctx.ingress_peer = pick(name, b, nil)
  ngx.ctx.ingress_backend = b
end

-- The first peer of `b` after `peer` (in the table's order, wrapping) not in `tried`.
local function untried(b, tried, peer)
  local n = #b.peers
  local start = 0
  for i, p in ipairs(b.peers) do
    if p == peer then start = i end
  end
  for k = 1, n do
    local p = b.peers[(start + k - 1) % n + 1]
    if not tried[p] then return p end
  end
  return nil
end

function M.balance()
  local ctx = ngx.ctx
  local peer = ctx.ingress_peer
  local b = ctx.ingress_backend
  if not peer or not b then
    return ngx.exit(502)
  end
  local tried = ctx.ingress_tried
  if not tried then
    tried = {}
    ctx.ingress_tried = tried
  end
  if ngx_balancer.get_last_failure() then
    -- nginx passes the request on: the last try failed. Another peer if one is left, else
    -- the same one (nginx adds a try by itself when a kept-alive connection fails).
    peer = untried(b, tried, peer) or peer
    ctx.ingress_peer = peer
  end
  tried[peer] = true
  if untried(b, tried, peer) then
    local ok, err = ngx_balancer.set_more_tries(1)
    if not ok then
      ngx.log(ngx.ERR, "ingress balancer: cannot allow another try: ", err)
    end
  end
  local host, port = string.match(peer, "^%[?([^%]]+)%]?:(%d+)$")
  local ok, err = ngx_balancer.set_current_peer(host, tonumber(port))
  if not ok then
    ngx.log(ngx.ERR, "ingress balancer: cannot use peer ", peer, ": ", err)
    return ngx.exit(502)
  end
end

-- `a=ID,m=METHOD,h=NAME:VALUE,q=NAME:VALUE,H=NAME:REGEX,Q=NAME:REGEX,p=REGEX;...`, every
-- value percent-encoded.
local function gw_parse(text)
  local list = {}
  for part in string.gmatch(text, "[^;]+") do
    local c = { headers = {}, query = {}, header_res = {}, query_res = {} }
    for field in string.gmatch(part, "[^,]+") do
      local k, v = string.match(field, "^(%a)=(.*)$")
      if k == "a" then
        c.action = v
      elseif k == "m" then
        c.method = v
      elseif k == "p" then
        c.path = unescape(v)
      elseif k == "h" or k == "H" then
        local name, value = string.match(v, "^([^:]*):(.*)$")
        local variable = "http_" .. string.gsub(string.lower(name or ""), "-", "_")
        local into = k == "h" and c.headers or c.header_res
        into[#into + 1] = { variable, unescape(value or "") }
      elseif k == "q" or k == "Q" then
        local name, value = string.match(v, "^([^:]*):(.*)$")
        local into = k == "q" and c.query or c.query_res
        into[#into + 1] = { unescape(name or ""), unescape(value or "") }
      end
    end
    list[#list + 1] = c
  end
  return list
end

-- Whether `subject` matches `regex` (anchored whole by the controller; dot-all); a regex
-- that fails (its match limit reached) ends the request with 500.
local function gw_re(subject, regex)
  if not subject then return false end
  local from, _, err = ngx.re.find(subject, regex, "jos")
  if err then
    ngx.log(ngx.ERR, "gateway regex: ", err)
    return ngx.exit(500)
  end
  return from ~= nil
end

-- The first value of query parameter `name`, decoded ("" for a bare `name`), or nil; the
-- query is read once per request, into `state`.
local function gw_arg(state, name)
  if not state.args then state.args = ngx.req.get_uri_args(100) end
  local v = state.args[name]
  if type(v) == "table" then v = v[1] end
  if v == true then v = "" end
  return v
end

-- Whether candidate `c` holds for this request.
local function gw_holds(c, state)
  if c.method and ngx.req.get_method() ~= c.method then return false end
  local var = ngx.var
  for _, h in ipairs(c.headers) do
    if var[h[1]] ~= h[2] then return false end
  end
  for _, q in ipairs(c.query) do
    if gw_arg(state, q[1]) ~= q[2] then return false end
  end
  for _, h in ipairs(c.header_res) do
    if not gw_re(var[h[1]], h[2]) then return false end
  end
  for _, q in ipairs(c.query_res) do
    if not gw_re(gw_arg(state, q[1]), q[2]) then return false end
  end
  if c.path and not gw_re(var.uri, c.path) then return false end
  return true
end

local gw_parsed = memo(gw_parse)

function M.gateway_match()
  local list = gw_parsed(ngx.var.gw_candidates or "")
  local state = {}
  for _, c in ipairs(list) do
    if gw_holds(c, state) then
      return ngx.exec("@gw" .. c.action)
    end
  end
  return ngx.exit(404)
end

function M.control()
  local uri = ngx.var.uri
  local method = ngx.req.get_method()
  if uri == "/backends" and method == "POST" then
    ngx.req.read_body()
    local body = ngx.req.get_body_data()
    -- An empty table (no backend at all) comes as an empty body, which nginx reports as none.
    if not body and not ngx.req.get_body_file() and tonumber(ngx.var.http_content_length) == 0 then
      body = ""
    end
    if not body then
      ngx.status = 400
      ngx.say("body missing or larger than the buffer")
      return
    end
    local ok, err = shared:set("backends", body)
    if not ok then
      ngx.status = 500
      ngx.say("cannot store the backends: ", err)
      return
    end
    shared:incr("version", 1, 0)
    ngx.status = 201
    ngx.say("stored")
  elseif uri == "/backends" and method == "GET" then
    ngx.print(shared:get("backends") or "")
  elseif uri == "/metrics" and method == "GET" then
    for _, k in ipairs(counts:get_keys(0)) do
      local v = counts:get(k)
      if v then ngx.say(k, "\t", v) end
    end
  else
    ngx.status = 404
    ngx.say("not found")
  end
end

-- Histogram upper bounds (+Inf is one more bucket), ingress-nginx's defaults; the controller
-- names buckets by index with the same lists (crate::metrics::requests).
local TIME = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 }
local LENGTH = { 10, 20, 30, 40, 50, 60, 70, 80, 90, 100 }
local SIZE = { 10, 100, 1000, 10000, 100000, 1000000, 10000000 }
-- One letter per histogram: request time, upstream response, connect and header times,
-- request length, bytes sent (twice: response_size and bytes_sent buckets).
local HISTOGRAMS = {
  { "d", TIME }, { "u", TIME }, { "c", TIME }, { "h", TIME },
  { "q", LENGTH }, { "r", LENGTH }, { "b", SIZE },
}
local METHODS = {
  GET = true, HEAD = true, POST = true, PUT = true, DELETE = true,
  CONNECT = true, OPTIONS = true, TRACE = true, PATCH = true,
}

local function new_series()
  local s = { n = 0 }
  for _, h in ipairs(HISTOGRAMS) do
    local t = { [0] = 0 }
    for i = 1, #h[2] + 1 do t[i] = 0 end
    s[h[1]] = t
  end
  return s
end

-- Slot 0 is the sum, slot i the count of bucket i (not cumulative).
local function observe(t, bounds, v)
  if not v then return end
  t[0] = t[0] + v
  local i = 1
  while i <= #bounds and v > bounds[i] do i = i + 1 end
  t[i] = t[i] + 1
end

local function flush()
  for key, s in pairs(series) do
    if s.n ~= 0 then
      counts:incr(key .. "\tn", s.n, 0)
      s.n = 0
    end
    for _, h in ipairs(HISTOGRAMS) do
      local t = s[h[1]]
      for i = 0, #h[2] + 1 do
        if t[i] ~= 0 then
          counts:incr(key .. "\t" .. h[1] .. i, t[i], 0)
          t[i] = 0
        end
      end
    end
  end
end

function M.init_worker()
  math.randomseed(ngx.now() * 1000 + ngx.worker.pid())
  local ok, err = ngx.timer.every(1, flush)
  if not ok then ngx.log(ngx.ERR, "ingress metrics: no flush timer: ", err) end
end

function M.log()
  local var = ngx.var
  -- The controller's own requests on the control socket are no traffic.
  if var.remote_addr == "unix:" then return end
  local upstream = var.proxy_upstream_name or "-"
  local namespace = var.namespace or ""
  local service = var.service_name or ""
  local canary = ""
  if service ~= "" and upstream ~= namespace .. "/" .. service .. ":" .. (var.service_port or "") then
    canary = upstream
  end
  local method = var.request_method
  if not METHODS[method] then method = "OTHER" end
  local key = (var.ingress_host or "") .. "\t" .. namespace .. "\t" .. (var.ingress_name or "")
    .. "\t" .. service .. "\t" .. (var.location_path or "") .. "\t" .. method .. "\t"
    .. ngx.status .. "\t" .. canary
  local s = series[key]
  if not s then
    s = new_series()
    series[key] = s
  end
  s.n = s.n + 1
  observe(s.d, TIME, tonumber(var.request_time))
  observe(s.u, TIME, tonumber(var.upstream_response_time))
  observe(s.c, TIME, tonumber(var.upstream_connect_time))
  observe(s.h, TIME, tonumber(var.upstream_header_time))
  observe(s.q, LENGTH, tonumber(var.request_length))
  local sent = tonumber(var.bytes_sent)
  observe(s.r, LENGTH, sent)
  observe(s.b, SIZE, sent)
end

package.loaded["ingress"] = M
"#;

/// The body of `access_by_lua_block` in proxied locations.
pub const ACCESS: &str = " require(\"ingress\").access() ";
/// The body of `rewrite_by_lua_block` in Gateway locations with conditions.
pub const GATEWAY_MATCH: &str = " require(\"ingress\").gateway_match() ";
/// The body of `rewrite_by_lua_block` in the internal locations of RequestMirror copies.
pub const MIRROR: &str = " require(\"ingress\").mirror() ";
/// The body of `balancer_by_lua_block` in the `ingress_balancer` upstream.
pub const BALANCE: &str = " require(\"ingress\").balance() ";
/// The body of `content_by_lua_block` on the control socket.
pub const CONTROL: &str = " require(\"ingress\").control() ";
/// The body of `init_worker_by_lua_block` at the `http` level (starts the metrics flush).
pub const INIT_WORKER: &str = " require(\"ingress\").init_worker() ";
/// The body of `log_by_lua_block` at the `http` level.
pub const LOG: &str = " require(\"ingress\").log() ";
