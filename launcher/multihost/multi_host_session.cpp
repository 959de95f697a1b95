#include "launcher/multihost/multi_host_session.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <exception>
#include <utility>

#include "rendezvous/c10d/dynamic_rendezvous.h"
#include "rendezvous/c10d/job_channel.h"
#include "rendezvous/etcd/etcd_job_channel.h"
#include "rendezvous/etcd/etcd_rendezvous.h"
#include "rendezvous/static/static_rendezvous.h"

namespace cpplaunch {
namespace asio = boost::asio;

namespace {

bool NotNeeded(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const RendezvousNotNeeded&) {
    return true;
  } catch (...) {
    return false;
  }
}

std::string Message(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace

MultiHostSession::MultiHostSession(asio::io_context& io, MultiHostPlan plan, Say say)
    : io_(io), plan_(std::move(plan)), say_(std::move(say)) {
  plan_.rendezvous.progress = [this](const std::string& line) { say_("rendezvous: " + line); };
  if (plan_.etcd) {
    etcd_ = std::make_shared<EtcdLink>(io_.get_executor(), plan_.etcd_settings, plan_.run_id);
    rendezvous_ = std::make_unique<EtcdRendezvous>(io_.get_executor(), plan_.rendezvous, etcd_);
  } else if (plan_.dynamic) {
    rendezvous_ = std::make_unique<DynamicRendezvous>(io_.get_executor(), plan_.rendezvous);
  } else {
    rendezvous_ = std::make_unique<StaticRendezvous>(io_.get_executor(), plan_.rendezvous);
  }
}

MultiHostSession::~MultiHostSession() {
  *alive_ = false;
  if (channel_) channel_->Stop();
  rendezvous_->Cancel();
}

void MultiHostSession::JoinRound(std::optional<RoundTransition> previous,
                                 std::function<void(const RendezvousResult&)> ready,
                                 std::function<void(const std::string&, bool)> failed) {
  asio::co_spawn(io_, rendezvous_->Next(previous),
                 [this, alive = alive_, ready = std::move(ready), failed = std::move(failed)](
                     const std::exception_ptr& error, RendezvousResult round) {
                   // The session may be gone when a cancelled coroutine completes.
                   if (!*alive) return;
                   if (error) return failed(Message(error), NotNeeded(error));
                   // A new round starts with a clean slate: the last round's end and pending
                   // notices belong to the old channel.
                   round_ = std::move(round);
                   round_end_.reset();
                   pending_publish_.reset();
                   publishing_ = false;
                   PublicationDone();
                   waiters_.clear();
                   channel_ready_ = false;
                   finishing_ = false;
                   ready(round_);
                 });
}

void MultiHostSession::CancelJoin() { rendezvous_->Cancel(); }

void MultiHostSession::OpenChannel(std::function<void(const RoundEnd&)> on_end) {
  on_end_ = std::move(on_end);
  auto deliver = [this](const RoundEnd& notice) { Deliver(notice); };
  if (etcd_) {
    channel_ = std::make_unique<EtcdJobChannel>(io_.get_executor(), etcd_, round_, deliver);
  } else {
    // On the rendezvous' connection: one store connection per agent.
    channel_ = std::make_unique<JobChannel>(io_.get_executor(), plan_.channel, round_, deliver,
                                            *rendezvous_->connection());
  }
  RoundChannel* channel = channel_.get();
  asio::co_spawn(io_, channel->Start(),
                 [this, alive = alive_, channel](const std::exception_ptr& error) {
                   if (!*alive || channel != channel_.get()) return;
                   if (error) {
                     RoundEnd lost = Notice(RoundEndKind::kStoreLost);
                     lost.detail = "cannot open the job channel: " + Message(error);
                     return Deliver(lost);
                   }
                   channel_ready_ = true;
                   // What happened while the channel connected (a quick failure, quick success)
                   // goes out now.
                   if (pending_publish_) {
                     RoundEnd notice = *pending_publish_;
                     pending_publish_.reset();
                     SendPublication(notice);
                   }
                   if (pending_finish_) {
                     auto done = std::move(pending_finish_);
                     pending_finish_ = nullptr;
                     FinishJob(std::move(done));
                   }
                 });
}

void MultiHostSession::PublishEnd(RoundEnd notice) {
  // One notice per round: a second one could only be a later event of this host, and a second
  // EndRound on the channel's one control connection would fail at once (it is busy), which
  // made this host act on that later notice (a sibling its teardown had stopped) while the
  // others acted on the first.
  if (round_end_ || publishing_) return;
  publishing_ = true;
  if (!channel_ || !channel_ready_) {
    pending_publish_ = std::move(notice);
    return;
  }
  SendPublication(notice);
}

void MultiHostSession::SendPublication(const RoundEnd& notice) {
  RoundChannel* channel = channel_.get();
  asio::co_spawn(
      io_, channel->EndRound(notice),
      [this, alive = alive_, channel, notice](const std::exception_ptr& error, const RoundEnd&) {
        if (!*alive || channel != channel_.get()) return;
        // On success the channel already delivered the winner. Without the store,
        // this host acts on its own notice (the others notice the store or the
        // heartbeats).
        if (error) Deliver(notice);
        PublicationDone();
      });
}

void MultiHostSession::WhenPublished(std::function<void()> fn) {
  if (round_end_ || !publishing_) return fn();
  publish_waiters_.push_back(std::move(fn));
}

void MultiHostSession::PublicationDone() {
  for (auto& waiter : std::exchange(publish_waiters_, {})) waiter();
}

void MultiHostSession::WhenEndKnown(std::function<void(const RoundEnd&)> fn) {
  if (round_end_) return fn(*round_end_);
  waiters_.push_back(std::move(fn));
}

void MultiHostSession::Deliver(const RoundEnd& notice) {
  if (round_end_) return;
  // First notice wins: every host acts on the same root cause.
  round_end_ = notice;
  if (finishing_ && channel_) channel_->Stop();  // interrupts the exit barrier
  if (on_end_) on_end_(notice);
  if (pending_finish_) {
    auto done = std::move(pending_finish_);
    pending_finish_ = nullptr;
    done(FinishOutcome::kInterrupted);
  }
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& waiter : waiters) waiter(notice);
  // Nothing is left to publish once the round's end is known.
  PublicationDone();
}

void MultiHostSession::CloseChannel() {
  if (!channel_) return;
  channel_->Stop();
  // Destroyed later: this may run inside one of the channel's own callbacks.
  asio::post(io_, [channel = std::shared_ptr<RoundChannel>(std::move(channel_))] {});
  channel_ready_ = false;
  PublicationDone();
}

void MultiHostSession::FinishJob(std::function<void(FinishOutcome)> done) {
  finishing_ = true;
  if (!channel_ready_ && !round_end_) {
    pending_finish_ = std::move(done);  // quick workers: the channel is still connecting
    return;
  }
  asio::co_spawn(io_, Finish(),
                 [alive = alive_, done = std::move(done)](const std::exception_ptr& error,
                                                          FinishOutcome outcome) {
                   if (!*alive) return;
                   done(error ? FinishOutcome::kInterrupted : outcome);
                 });
}

asio::awaitable<FinishOutcome> MultiHostSession::Finish() {
  RoundChannel* channel = channel_.get();
  if (channel == nullptr || round_end_) co_return FinishOutcome::kInterrupted;
  try {
    if (!co_await channel->ExitBarrier(plan_.exit_barrier_timeout)) {
      co_return FinishOutcome::kTimedOut;
    }
    // A clean departure from here on: this agent's exit must not end the round for the others.
    co_await rendezvous_->Disarm();
    co_await channel->Depart(plan_.depart_linger);
  } catch (const std::exception&) {
    co_return FinishOutcome::kInterrupted;
  }
  // Only after every host departed: a late host then learns the job is over, not that a
  // round is open. torchrun's agent likewise shuts its rendezvous down after a success.
  co_await rendezvous_->Close(std::string(kJobFinished));
  co_return FinishOutcome::kPassed;
}

void MultiHostSession::CloseRendezvous(std::string reason) {
  asio::co_spawn(io_, rendezvous_->Close(std::move(reason)), asio::detached);
}

RoundEnd MultiHostSession::Notice(RoundEndKind kind) const {
  RoundEnd notice;
  notice.kind = kind;
  notice.host = plan_.rendezvous.self.hostname;
  notice.node_rank = round_.group_rank;
  if (round_.group_rank < round_.group_world_size()) {
    notice.addr = round_.self().addr;
  }
  return notice;
}

}  // namespace cpplaunch
