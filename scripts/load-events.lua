-- wrk script: POST /v1/users/{id}/events over USERS users (created beforehand by load-events.sh),
-- cycling through a few activity events. Each connection takes its own slice of users.
local users = tonumber(os.getenv("USERS") or "1000")
local key = os.getenv("ENGAGED_API_KEY") or ""
-- KEYED=1: each request carries its own Idempotency-Key (stored with the event, as apps send them).
local keyed = os.getenv("KEYED") == "1"
local bodies = {
  '{"type": "appOpened", "sessionSeconds": 90}',
  '{"type": "mealLogged", "meal": "lunch"}',
  '{"type": "moodLogged"}',
  '{"type": "workoutCompleted", "durationMinutes": 35}',
  '{"type": "coachChat"}',
}
local counter = 0
local threads = {}

function setup(thread)
  thread:set("offset", #threads * 7919)
  table.insert(threads, thread)
end

function request()
  counter = counter + 1
  local user = (counter + offset) % users
  local body = bodies[(counter % #bodies) + 1]
  local headers = {
    ["Authorization"] = "Bearer " .. key,
    ["Content-Type"] = "application/json",
  }
  if keyed then headers["Idempotency-Key"] = "load-" .. offset .. "-" .. counter end
  return wrk.format("POST", "/v1/users/load" .. user .. "/events", headers, body)
end

-- Any answer but 202 is counted and reported (wrk counts non-2xx/3xx itself).
function response(status, headers, body)
  if status ~= 202 then
    io.stderr:write("unexpected status " .. status .. ": " .. body .. "\n")
  end
end
