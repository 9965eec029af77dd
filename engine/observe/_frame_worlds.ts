/**
 * The observer's hold on targets and frames: the page scripts installed in
 * every target, each frame's isolated world, the iframe elements hosting
 * child frames, and the distiller run in one frame.
 *
 * @module
 */
import type { CdpSession } from "../cdp/connection.ts";
import { ConnectionClosedError, ProtocolError } from "../cdp/errors.ts";
import { bestEffort } from "../log.ts";
import type { DistillRequest, DistillResult } from "./wire.ts";
// The observe call answers one JSON string: it crosses faster than the same value as a protocol object tree.
import { ADOPT_CALL, OBSERVE_CALL, SUSPECTS_CALL } from "./_page_bundle.ts";

/** The name of the isolated world the distiller runs in. */
export const WORLD_NAME = "__webserv_observer";

/** The object group remote objects from the observer belong to. */
export const OBJECT_GROUP = "webserv-observer";

/** What the observer knows of one target (a page, popup or out-of-process iframe). */
export interface SessionState {
  session: CdpSession;
  /** Frames attached in the target, counted from `Page.frameAttached` and `Page.frameDetached`. */
  frameCount: number;
  /** frame id → our isolated world's execution context id. */
  worlds: Map<string, number>;
  /**
   * child frame id → the iframe element hosting it, as a remote object in
   * our isolated world (kept across observations: two round trips a frame
   * saved each time; dropped when the frame detaches or the world goes).
   */
  owners: Map<string, { contextId: number; objectId: string }>;
  /** The frames of the target, `[frame id, parent id]`, until a frame attaches, detaches or navigates. */
  tree?: [string, string | undefined][] | undefined;
  /** Frame attachments and detachments seen, so a tree read meanwhile is not kept. */
  treeChanges: number;
  ready: Promise<void>;
  /**
   * The origin of the target's root frame when last distilled: same-origin
   * sibling targets are distilled in one call (they share a renderer).
   */
  origin?: string;
}

/** A frame of a page: its id, its parent's and the target it lives in. */
export interface FrameInfo {
  frameId: string;
  parentId: string | undefined;
  state: SessionState;
}

/**
 * The request that repeats `req` once `done` answered it: ids go on from
 * where each frame's call stopped (its own, and each folded child's and
 * sibling's), and each distiller counts the repeat as the same observation.
 */
function repeatOf(req: DistillRequest, done: DistillResult): DistillRequest {
  const repeat: DistillRequest = { ...req, nextId: done.nextId, again: true };
  if (req.folds) {
    repeat.folds = req.folds.map((fold, i) => {
      const answer = done.folded?.[i];
      return answer ? { ...fold, req: repeatOf(fold.req, answer) } : fold;
    });
  }
  if (req.siblings) {
    repeat.siblings = req.siblings.map((sibling, i) => {
      const answer = done.siblings?.[i];
      return answer ? { ...sibling, req: repeatOf(sibling.req, answer) } : sibling;
    });
  }
  return repeat;
}

/** Whether a CDP error says the context, frame or object went away (not the target). */
export function isContextGone(error: unknown): boolean {
  return error instanceof ProtocolError && !(error.name === "TargetClosedError") &&
    /context|frame|node|object/i.test(error.message);
}

/** The targets an observer prepared and their frames' isolated worlds. */
export class FrameWorlds {
  #sessions = new WeakMap<CdpSession, SessionState>();
  #hookSource: string;
  #isolatedSource: string;

  /**
   * @param hookSource the main-world hook script
   * @param isolatedSource the isolated-world script (distiller and act library)
   */
  constructor(hookSource: string, isolatedSource: string) {
    this.#hookSource = hookSource;
    this.#isolatedSource = isolatedSource;
  }

  /** The state of a prepared target; throws for one never prepared. */
  state(session: CdpSession): SessionState {
    const state = this.#sessions.get(session);
    if (!state) throw new Error("Cannot observe: session not prepared");
    return state;
  }

  /** Installs the scripts in a target, once; tracks the isolated world's contexts. */
  prepare(session: CdpSession): Promise<void> {
    const existing = this.#sessions.get(session);
    if (existing) return existing.ready;
    const worlds = new Map<string, number>();
    const byContext = new Map<number, string>();
    session.on("Runtime.executionContextCreated", ({ context }) => {
      const aux = context.auxData as { frameId?: unknown } | undefined;
      if (context.name !== WORLD_NAME || typeof aux?.frameId !== "string") return;
      worlds.set(aux.frameId, context.id);
      byContext.set(context.id, aux.frameId);
    });
    session.on("Runtime.executionContextDestroyed", ({ executionContextId }) => {
      const frameId = byContext.get(executionContextId);
      byContext.delete(executionContextId);
      if (frameId !== undefined && worlds.get(frameId) === executionContextId) {
        worlds.delete(frameId);
      }
    });
    session.on("Runtime.executionContextsCleared", () => {
      worlds.clear();
      byContext.clear();
      owners.clear();
      if (state) {
        state.treeChanges++;
        state.tree = undefined;
      }
    });
    const ready = (async () => {
      await Promise.all([
        session.send("Page.enable"),
        session.send("Page.addScriptToEvaluateOnNewDocument", {
          source: this.#hookSource,
          runImmediately: true,
        }),
        session.send("Page.addScriptToEvaluateOnNewDocument", {
          source: this.#isolatedSource,
          worldName: WORLD_NAME,
          runImmediately: true,
        }),
        session.send("Runtime.enable"),
      ]);
    })();
    const owners = new Map<string, { contextId: number; objectId: string }>();
    const state: SessionState = { session, worlds, owners, ready, frameCount: 1, treeChanges: 0 };
    // A document replaced drops its child frames, not always with a detach event each.
    session.on("Page.frameNavigated", () => {
      state.treeChanges++;
      state.tree = undefined;
    });
    session.on("Page.frameAttached", () => {
      state.frameCount++;
      state.treeChanges++;
      state.tree = undefined;
    });
    session.on("Page.frameDetached", ({ frameId, reason }) => {
      if (reason !== "swap") state.frameCount--;
      state.treeChanges++;
      state.tree = undefined;
      const owner = owners.get(frameId);
      if (owner && reason !== "swap") {
        owners.delete(frameId);
        bestEffort(
          "releasing a frame owner",
          session.send("Runtime.releaseObject", { objectId: owner.objectId }),
        );
      }
    });
    this.#sessions.set(session, state);
    return ready;
  }

  /** Every frame of the page across its sessions, with parents. */
  async frames(states: SessionState[]): Promise<FrameInfo[]> {
    const frames: FrameInfo[] = [];
    await Promise.all(states.map(async (state) => {
      let tree = state.tree;
      if (!tree) {
        const changes = state.treeChanges;
        let frameTree;
        try {
          ({ frameTree } = await state.session.send("Page.getFrameTree"));
        } catch (error) {
          if (state.session.closeReason !== undefined) return;
          throw error;
        }
        const list: [string, string | undefined][] = [];
        const visit = (node: typeof frameTree, parentId: string | undefined): void => {
          list.push([node.frame.id, parentId ?? node.frame.parentId]);
          for (const child of node.childFrames ?? []) visit(child, node.frame.id);
        };
        visit(frameTree, undefined);
        tree = list;
        // Kept until a frame attaches, detaches or navigates (the events clear it).
        if (state.treeChanges === changes) state.tree = list;
      }
      for (const [frameId, parentId] of tree) frames.push({ frameId, parentId, state });
    }));
    // A frame listed by two sessions (an out-of-process child seen from its
    // parent) belongs to the session where it is the root.
    const owner = new Map<string, FrameInfo>();
    for (const frame of frames) {
      const seen = owner.get(frame.frameId);
      if (!seen) owner.set(frame.frameId, frame);
      else if (frame.state.session.targetInfo?.targetId === frame.frameId) {
        owner.set(frame.frameId, frame);
      }
    }
    return [...owner.values()];
  }

  /** The isolated world's context in a frame, created if the frame has none yet. */
  async world(frame: FrameInfo): Promise<number | undefined> {
    const known = frame.state.worlds.get(frame.frameId);
    if (known !== undefined) return known;
    try {
      const { executionContextId } = await frame.state.session.send("Page.createIsolatedWorld", {
        frameId: frame.frameId,
        worldName: WORLD_NAME,
      });
      await frame.state.session.send("Runtime.evaluate", {
        expression: this.#isolatedSource,
        contextId: executionContextId,
      });
      frame.state.worlds.set(frame.frameId, executionContextId);
      return executionContextId;
    } catch (error) {
      if (isContextGone(error)) return undefined;
      throw error;
    }
  }

  /** Runs the distiller in one frame; `undefined` when the frame went away meanwhile. */
  async distill(
    frame: FrameInfo,
    children: FrameInfo[],
    req: DistillRequest,
    required: boolean,
  ): Promise<DistillResult | undefined> {
    let retried = false;
    for (let attempt = 0;; attempt++) {
      try {
        const contextId = await this.world(frame);
        if (contextId === undefined) throw new ProtocolError("Cannot find the frame's context");
        const owners = await Promise.all(
          children.map((child) => this.#owner(frame, child, contextId)),
        );
        const { result, exceptionDetails } = await frame.state.session.send(
          "Runtime.callFunctionOn",
          {
            functionDeclaration: OBSERVE_CALL,
            executionContextId: contextId,
            arguments: [
              { value: req },
              ...owners.map((objectId) => objectId ? { objectId } : { value: null }),
            ],
            returnByValue: true,
          },
        );
        if (exceptionDetails) {
          const text = exceptionDetails.exception?.description ?? exceptionDetails.text;
          throw new ProtocolError(`Distiller failed in frame "${frame.frameId}": ${text}`);
        }
        if (typeof result.value !== "string") {
          throw new ProtocolError(`Distiller gave no answer in frame "${frame.frameId}"`);
        }
        const distilled = JSON.parse(result.value) as DistillResult;
        // Custom elements that may hold closed shadow roots: hand any found to the world
        // and distill again, once (each host is looked at once in its life).
        if (distilled.suspects && await this.#adoptClosedRoots(frame, contextId) && !retried) {
          retried = true;
          attempt--;
          req = repeatOf(req, distilled);
          continue;
        }
        return distilled;
      } catch (error) {
        // The kept frame tree may be what is stale: read it afresh next time.
        frame.state.tree = undefined;
        if (frame.state.session.closeReason !== undefined && !required) return undefined;
        if (attempt < 3 && frame.state.owners.size && !isContextGone(error)) {
          // A kept frame owner went stale: resolve the owners afresh.
          this.#dropOwners(frame.state);
          continue;
        }
        if (!isContextGone(error) || attempt >= 3) {
          if (!required) return undefined;
          throw error;
        }
        // The document is being replaced: wait for the new world, then retry.
        frame.state.worlds.delete(frame.frameId);
        await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
      }
    }
  }

  /**
   * Looks for closed shadow roots in the custom elements the walk met
   * without a visible one: `DOM.describeNode` lists a node's shadow roots,
   * closed ones too, and `DOM.resolveNode` makes a closed root an object
   * of the isolated world, which keeps it beside its host (`ADOPT_CALL`).
   * See https://chromedevtools.github.io/devtools-protocol/tot/DOM/#method-describeNode.
   *
   * @returns whether any closed root was found
   */
  async #adoptClosedRoots(frame: FrameInfo, contextId: number): Promise<boolean> {
    const session = frame.state.session;
    const group = OBJECT_GROUP + "-closed-roots";
    let found = false;
    try {
      const { result } = await session.send("Runtime.callFunctionOn", {
        functionDeclaration: SUSPECTS_CALL,
        executionContextId: contextId,
        objectGroup: group,
      });
      if (!result.objectId) return false;
      const { result: items } = await session.send("Runtime.getProperties", {
        objectId: result.objectId,
        ownProperties: true,
      });
      const hosts = items.filter((item) => /^\d+$/.test(item.name) && item.value?.objectId)
        .map((item) => item.value!.objectId!);
      await Promise.all(hosts.map(async (objectId) => {
        try {
          found = await this.#adoptOne(session, objectId, contextId, group) || found;
        } catch (error) {
          // A host that left the document meanwhile has nothing to hand over.
          if (!(error instanceof ProtocolError) || error instanceof ConnectionClosedError) {
            throw error;
          }
        }
      }));
    } finally {
      bestEffort(
        "releasing closed-root handles",
        session.send("Runtime.releaseObjectGroup", { objectGroup: group }),
      );
    }
    return found;
  }

  /** Hands the closed root of one host, if it has one, to the isolated world. */
  async #adoptOne(
    session: CdpSession,
    objectId: string,
    contextId: number,
    group: string,
  ): Promise<boolean> {
    const { node } = await session.send("DOM.describeNode", { objectId, depth: 1 });
    const closed = node.shadowRoots?.find((root) => root.shadowRootType === "closed");
    if (!closed) return false;
    const { object } = await session.send("DOM.resolveNode", {
      backendNodeId: closed.backendNodeId,
      executionContextId: contextId,
      objectGroup: group,
    });
    if (!object.objectId) return false;
    await session.send("Runtime.callFunctionOn", {
      functionDeclaration: ADOPT_CALL,
      objectId,
      arguments: [{ objectId: object.objectId }],
    });
    return true;
  }

  /** Forgets (and releases) the kept frame owners of a session. */
  #dropOwners(state: SessionState): void {
    state.owners.clear();
    bestEffort(
      "releasing frame owners",
      state.session.send("Runtime.releaseObjectGroup", { objectGroup: OBJECT_GROUP + "-owners" }),
    );
  }

  /** A remote object, in the parent's isolated world, of the iframe element hosting `child`. */
  async #owner(
    parent: FrameInfo,
    child: FrameInfo,
    contextId: number,
  ): Promise<string | undefined> {
    const kept = parent.state.owners.get(child.frameId);
    if (kept && kept.contextId === contextId) return kept.objectId;
    try {
      const { backendNodeId } = await parent.state.session.send("DOM.getFrameOwner", {
        frameId: child.frameId,
      });
      const { object } = await parent.state.session.send("DOM.resolveNode", {
        backendNodeId,
        executionContextId: contextId,
        objectGroup: OBJECT_GROUP + "-owners",
      });
      if (object.objectId) {
        parent.state.owners.set(child.frameId, { contextId, objectId: object.objectId });
      }
      return object.objectId;
    } catch (error) {
      if (error instanceof ProtocolError) return undefined;
      throw error;
    }
  }
}
