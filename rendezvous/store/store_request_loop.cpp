// StoreServerImpl's request loop (store_server_impl.h): a session's input decoded and applied,
// replies, wake-ups and notifications delivered, long requests continued in slices.

#include <boost/asio/post.hpp>
#include <cstdio>
#include <string>
#include <utility>

#include "rendezvous/store/store_server_impl.h"
#include "rendezvous/store/wire/reply_codec.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;

// Session inputs handled between two non-blocking looks at the listen queue.
constexpr int kAcceptPollInterval = 32;

}  // namespace

// Decodes and applies every complete request in `input`, stopping early when the session must
// close or has queued enough output to pause.
void StoreServerImpl::OnInput(StoreSession& session, std::string_view input) {
  // In a connection storm the acceptor's readiness can sit behind thousands of session events
  // in epoll's ready list while the listen queue (SOMAXCONN) overflows and clients fall into
  // SYN retransmission (1 s, 3 s, ...). Polling the queue every few inputs bounds that delay.
  if (++inputs_since_accept_ >= kAcceptPollInterval) {
    inputs_since_accept_ = 0;
    DrainAcceptQueue();
  }
  RequestDecoder& decoder = session.decoder();
  while (session.accepting_input()) {
    DecodeResult result = decoder.Feed(input);
    input.remove_prefix(result.consumed);
    // Checked after every read (64 KiB at most): an unfinished request holds its bytes.
    if (!HoldInput(session)) return;
    if (result.status == DecodeStatus::kNeedMore) return;
    if (result.status == DecodeStatus::kMalformed) {
      if (decoder.over_limit()) {
        Refuse(session, CommandName(decoder.request().command), decoder.error());
      }
      return session.CloseAfterFlush();
    }
    session.set_command(decoder.request().command);
    if (!Apply(session, decoder.request())) {
      Deliver(session);  // a refused handshake's answer goes out before the close
      return session.CloseAfterFlush();
    }
    if (!Applied(session)) return;
    if (effects_.more) {
      session.BeginLong(input);
      if (!HoldInput(session)) return;
      return ContinueLater(session);
    }
    if (session.queued() > kPauseReadingAt) {
      session.Pause(input);
      HoldInput(session);
      return;
    }
  }
}

// Charges what `session` holds of its input to the budget; a session over its share, or one
// the budget cannot hold, is closed at once: none of its input is worked through.
bool StoreServerImpl::HoldInput(StoreSession& session) {
  const uint64_t keep_free = session.agent() ? 0 : budget_.agent_reserve();
  if (session.ChargeInput(keep_free)) return true;
  const uint64_t held = session.input_held();
  const uint64_t share = budget_.limits().max_connection_bytes;
  Refuse(session, CommandName(session.decoder().request().command),
         "holding " + ByteSize(held) + " of input for an unfinished request would exceed " +
             (held > share ? "the limit of " + ByteSize(share) + " per connection"
                           : budget_.Describe()),
         held > share ? Over::kLimit : Over::kBudget);
  Close(session);
  return false;
}

// Applies one request to the requester's namespace (effects_ as KvTable::Apply leaves them);
// false when a handshake is refused: the connection closes after its answer. The handshake and
// CLEAR_WORKER_KEYS are the server's own: they concern the connection and the other namespace.
bool StoreServerImpl::Apply(StoreSession& session, Request& request) {
  ++counters_.requests;
  session.set_long_id(session.id());
  if (session.agent()) {
    session.OweTag(request.tag, ReplyShapeOf(request.command) != ReplyShape::kNone);
  }
  switch (request.command) {
    case Command::kAgentHello:
    case Command::kAgentProof:
      effects_.Clear();
      return AgentHandshake(session, request);
    case Command::kClearWorkerKeys:
      effects_.Clear();
      EncodeI64(workers_.Clear(&effects_), &effects_.reply);
      ReleaseLater();
      return true;
    case Command::kWait:
    case Command::kBarrier:
      if (!session.agent()) break;
      StartTaggedWait(session, request);
      return true;
    case Command::kCancelWait:
      if (!session.agent()) break;
      CancelTaggedWait(session, request.u32);
      return true;
    default:
      break;
  }
  TableOf(session).Apply(session.id(), request, &effects_);
  return true;
}

// Frees what CLEAR_WORKER_KEYS set aside and sweeps the registrations of waits that went (a
// closed connection's 131,072 keys, say), a slice per turn of the loop (a millisecond or two
// each), so other clients and the agent's supervision are served in between. Called after
// every turn that applied requests or closed a connection; posts at most one turn at a time.
void StoreServerImpl::ReleaseLater() {
  constexpr size_t kReleaseSlice = 8192;
  if (release_posted_ || stopped_ || (!workers_.releasing() && !agents_.releasing())) return;
  release_posted_ = true;
  asio::post(io_, [self = shared_from_this()] {
    self->release_posted_ = false;
    const uint64_t before = self->budget_.used();
    const bool more =
        self->workers_.ReleaseSome(kReleaseSlice) | self->agents_.ReleaseSome(kReleaseSlice);
    if (more) self->ReleaseLater();
    // Counted towards a heap trim, which the last slice does: one walk of the heap after a
    // sweep of 200 MB rather than one per 16 MiB of it (each one is tens of milliseconds).
    if (self->budget_.used() < before) self->Released(before - self->budget_.used());
    if (!more) self->TrimSoon();
  });
}

// Delivers what the table produced for `session`'s request. False when the session is closed
// or closing (a failed or refused request).
bool StoreServerImpl::Applied(StoreSession& session) {
  if (!effects_.error.empty()) {
    if (effects_.refused) {
      Refuse(session, CommandName(session.command()), effects_.error,
             effects_.over_budget ? Over::kBudget : Over::kLimit);
    }
    session.CloseAfterFlush();
    return false;
  }
  Deliver(session);
  return !session.closed();
}

// The next slice of a long request runs after the handlers already queued (other clients,
// timers, supervision); a MULTI_GET's next slice also waits until the client read the last.
void StoreServerImpl::ContinueLater(StoreSession& session) {
  if (session.queued() > kPauseReadingAt) return session.ContinueAfterWrite();
  asio::post(io_, [self = shared_from_this(), session = session.shared_from_this()] {
    if (!session->closed() && !self->stopped_) {
      self->ContinueLong(*session);
      self->FlushDirty();
    }
  });
}

void StoreServerImpl::ContinueLong(StoreSession& session) {
  TableOf(session).Continue(session.long_id(), &effects_);
  if (!Applied(session)) return;
  if (effects_.more) return ContinueLater(session);
  FinishLong(session);
}

// The end of a long request: a WAIT's slot is freed unless it still waits; wake-ups held back
// during the reply go out.
void StoreServerImpl::FinishLong(StoreSession& session) {
  const ConnId slot = session.long_id();
  session.set_long_id(session.id());
  if (slot != session.id() && slots_[slot].owner == session.id() &&
      (!agents_.waiting(slot) || session.waits().count(slots_[slot].tag) == 0)) {
    ReleaseSlot(slot);
  }
  std::string held = session.TakeHeld();
  if (!held.empty() && !QueueTo(session.id(), std::string_view(held), "a wake-up")) return;
  session.EndLong();  // may decode and apply the input held back meanwhile
}

void StoreServerImpl::Deliver(StoreSession& requester) {
  const std::string_view command = CommandName(requester.command());
  // The tag goes with the first bytes of the reply, or alone before an empty one (a MULTI_GET
  // of no keys); a WAIT that is left pending owes it to its wake-up.
  if (requester.tag_owed() && (!effects_.reply.empty() || !effects_.more) &&
      !(requester.long_id() != requester.id() && effects_.reply.empty())) {
    std::string tagged;
    requester.PayTag(&tagged);
    tagged.append(effects_.reply);
    effects_.reply.swap(tagged);
  }
  if (effects_.reply.size() > kKeepBuffer) {
    QueueTo(requester.id(), std::move(effects_.reply), command);
  } else if (!effects_.reply.empty()) {
    QueueTo(requester.id(), effects_.reply, command);
  }
  DeliverWakeups(effects_);
}

// Wake-ups and WATCH_KEY notifications of `effects` (a request's, or a closed agent's wills).
void StoreServerImpl::DeliverWakeups(const TableEffects& effects) {
  static constexpr char kStop = static_cast<char>(kStopWaiting);
  for (ConnId conn : effects.woken) {
    if (conn < slots_.size() && slots_[conn].owner != kNoOwner) {
      WakeSlot(conn);
    } else {
      QueueTo(conn, std::string_view(&kStop, 1), "a wake-up");
    }
  }
  for (const auto& notice : effects.notices) {
    for (ConnId conn : notice.conns) {
      if (notice.bytes.size() == notice.size) {
        QueueTo(conn, notice.bytes, "a WATCH_KEY notification");
      } else if (conn < sessions_.size() && sessions_[conn]) {
        Refuse(*sessions_[conn], "a WATCH_KEY notification",
               "a notification of " + ByteSize(notice.size) + " would exceed " + budget_.Describe(),
               Over::kBudget);
        Close(*sessions_[conn]);
      }
    }
  }
}

// False when `conn` is gone or was closed because the bytes do not fit.
bool StoreServerImpl::QueueTo(ConnId conn, std::string_view bytes, std::string_view what) {
  StoreSession* session = Admit(conn, bytes.size(), what);
  if (session != nullptr) session->Queue(bytes);
  return session != nullptr;
}

bool StoreServerImpl::QueueTo(ConnId conn, std::string&& bytes, std::string_view what) {
  StoreSession* session = Admit(conn, bytes.size(), what);
  if (session != nullptr) session->Queue(std::move(bytes));
  return session != nullptr;
}

// The session that may take `size` more bytes of output, or null (gone, or closed now).
StoreSession* StoreServerImpl::Admit(ConnId conn, size_t size, std::string_view what) {
  if (conn >= sessions_.size() || !sessions_[conn]) return nullptr;
  StoreSession& session = *sessions_[conn];
  // A peer that never reads its replies or wake-ups is dropped, not buffered without bound.
  if (session.queued() + size > options_.max_output_bytes) {
    Close(session);
    return nullptr;
  }
  if (!budget_.CanQueue(size)) {
    Refuse(session, what,
           "queueing " + ByteSize(size) + " of output would exceed " + budget_.Describe(),
           Over::kBudget);
    Close(session);
    return nullptr;
  }
  return &session;
}

// One line on the host's console (rate-limited); the caller closes the session.
// An agent's refusal has a log of its own: it ends the agent's connection (and so its part in
// the job), and must not hide among workers' or strangers' refusals as "and N more".
void StoreServerImpl::Refuse(StoreSession& session, std::string_view what,
                             const std::string& reason, Over over) {
  ++counters_.refused;
  const std::string who = session.agent() ? "the agent at " + session.peer() : session.peer();
  // Counted whatever the log lets through: the agent's summary names one when the run fails.
  if (over == Over::kBudget) {
    ++counters_.budget_refusals;
    if (session.agent()) ++counters_.agent_budget_refusals;
    if (session.agent() || counters_.budget_refusals == 1) {
      counters_.budget_refusal = std::string(what) + " from " + who + ": " + reason;
    }
  }
  auto line =
      (session.agent() ? agent_refusals_ : refusals_)
          .Admit(RateLimitedLog::Clock::now(), "store: refused " + std::string(what) + " from " +
                                                   who + ": " + reason + "; connection closed");
  if (!line) return;
  if (options_.report) return options_.report(*line);
  std::fprintf(stderr, "%s\n", line->c_str());
}

}  // namespace cpplaunch
